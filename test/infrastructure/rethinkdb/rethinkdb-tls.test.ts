import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { createServer as createTcpServer, type Server } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'
import { connectRethinkDb, type RethinkDbTls } from '../../../src/infrastructure/rethinkdb/rethinkdb-connection.js'
import { standInRethinkDb } from '../../support/stand-in-rethinkdb.js'
import { makeCertificates, OPENSSL, SERVER_NAME, type TestCertificates } from '../../support/test-certificates.js'

/*
 * The TLS handshake that precedes RethinkDB's own, against node:tls servers that stand in for a
 * driver port (test/e2e/rethinkdb-secured.test.ts does it against a real RethinkDB): the driver
 * gets the CA, the server name and the client certificate, and logs in over TLS; every refusal
 * stops connectRethinkDb at once with one line saying what to change — never the 20 s timeout,
 * whose message differs. Certificates come from the `openssl` command line.
 */
const withOpenssl = OPENSSL ? describe : describe.skip
if (!OPENSSL)
  process.stderr.write('\nRethinkDB TLS handshake suite SKIPPED: no openssl command to make certificates with\n\n')

let certificates: TestCertificates
const servers: Server[] = []

beforeAll(async () => {
  if (OPENSSL) certificates = await makeCertificates()
}, 30_000)
afterAll(async () => {
  for (const server of servers) server.close()
  await certificates?.remove()
})

const pem = (path: string) => readFileSync(path, 'utf8')

async function listening(server: Server): Promise<number> {
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as { port: number }).port
}

/** A TLS driver port with the server certificate; `clientCertificates` asks every client for one the CA signed. */
function tlsPort(clientCertificates = false): Promise<number> {
  return listening(
    createTlsServer(
      {
        cert: pem(certificates.serverCert),
        key: pem(certificates.serverKey),
        ca: pem(certificates.ca),
        requestCert: clientCertificates,
        rejectUnauthorized: clientCertificates
      },
      (socket) => socket.on('error', () => undefined)
    )
  )
}

function refusal(port: number, tls: RethinkDbTls): Promise<string> {
  return connectRethinkDb(`rethinkdb://127.0.0.1:${port}/app`, { tls, timeoutMs: 20_000 }).then(
    async (connection) => {
      await connection.close()
      throw new Error('connected, but should have been refused')
    },
    (error: unknown) => (error as Error).message
  )
}

withOpenssl('connecting with TLS', () => {
  it("logs in over TLS with the CA and the name in the server's certificate, and with a client certificate when the server asks for one", async () => {
    const serverTls = { cert: pem(certificates.serverCert), key: pem(certificates.serverKey), ca: pem(certificates.ca) }
    const plain = await standInRethinkDb({ password: 'pw', tls: serverTls })
    const mutual = await standInRethinkDb({
      password: 'pw',
      tls: { ...serverTls, requestCert: true, rejectUnauthorized: true }
    })
    try {
      const tls = { ca: pem(certificates.ca), servername: SERVER_NAME }
      await (
        await connectRethinkDb(`rethinkdb://app:pw@127.0.0.1:${plain.port}/app`, { tls, timeoutMs: 20_000 })
      ).close()
      await (
        await connectRethinkDb(`rethinkdb://app:pw@127.0.0.1:${mutual.port}/app`, {
          tls: { ...tls, cert: pem(certificates.clientCert), key: pem(certificates.clientKey) },
          timeoutMs: 20_000
        })
      ).close()
      expect([plain.accepted, mutual.accepted]).toEqual([
        expect.arrayContaining(['app']),
        expect.arrayContaining(['app'])
      ])
    } finally {
      plain.close()
      mutual.close()
    }
  }, 30_000)

  it('refuses a server whose certificate another CA signed, in one line', async () => {
    const port = await tlsPort()
    expect(await refusal(port, { ca: pem(certificates.otherCa), servername: SERVER_NAME })).toMatch(
      new RegExp(
        `^RethinkDB at 127\\.0\\.0\\.1:${port} failed the TLS check: [^\\n]+ \\((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\\); ` +
          "RETHINKDB_TLS_CA must be the CA that signed the server's certificate$"
      )
    )
  }, 30_000)

  it('refuses a certificate that does not name the host, and says to set RETHINKDB_TLS_SERVERNAME', async () => {
    const port = await tlsPort()
    expect(await refusal(port, { ca: pem(certificates.ca) })).toMatch(
      /failed the TLS check: .+ \(ERR_TLS_CERT_ALTNAME_INVALID\); the server's certificate does not name the host of RETHINKDB_URL: set RETHINKDB_TLS_SERVERNAME to a name it carries$/
    )
  }, 30_000)

  it('says the server wants a client certificate when it asks for one and gets none', async () => {
    const port = await tlsPort(true)
    expect(await refusal(port, { ca: pem(certificates.ca), servername: SERVER_NAME })).toMatch(
      /failed the TLS check: .+ \(ERR_SSL_\w+\); the server wants a client certificate it trusts: set RETHINKDB_TLS_CERT and RETHINKDB_TLS_KEY$/
    )
  }, 30_000)

  it('asks whether the server serves TLS at all when it answers in plain text', async () => {
    const port = await listening(
      createTcpServer((socket) =>
        socket.once('data', () => socket.end('ERROR: Received an unsupported protocol version.\0'))
      )
    )
    expect(await refusal(port, { ca: pem(certificates.ca), servername: SERVER_NAME })).toMatch(
      /failed the TLS check: wrong version number \(ERR_SSL_WRONG_VERSION_NUMBER\); does the server serve TLS on its driver port \(--driver-tls-key, --driver-tls-cert\)\?$/
    )
  }, 30_000)
})
