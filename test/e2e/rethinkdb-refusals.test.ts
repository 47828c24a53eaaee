import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer as createTlsServer, type Server } from 'node:tls'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildMain } from '../support/built-server.js'
import { standInRethinkDb } from '../support/stand-in-rethinkdb.js'
import { makeCertificates, OPENSSL, SERVER_NAME, type TestCertificates } from '../support/test-certificates.js'

/*
 * The built server (`npm start`'s bundle) against RethinkDB settings and servers that cannot work:
 * exit code 1 and exactly one line on stderr, at once (RETHINKDB_TIMEOUT is 60 s, the test's limit
 * 30 s), and no password anywhere in what it printed. The servers are stand-ins: a driver port that
 * knows another password (test/support/stand-in-rethinkdb.ts), and a node:tls port with a
 * certificate the test's CA signed
 * (test/e2e/rethinkdb-secured.test.ts does the same against a real RethinkDB).
 */
const PASSWORD = 's3cret p@ss:w/rd'
const SECRETS = [PASSWORD, encodeURIComponent(PASSWORD)]

let built: { main: string; outDir: string }
let scratch: string

beforeAll(async () => {
  built = await buildMain('refusals')
  scratch = await mkdtemp(join(tmpdir(), 'plumage-refusals-'))
}, 60_000)
afterAll(async () => {
  await rm(built.outDir, { recursive: true, force: true })
  await rm(scratch, { recursive: true, force: true })
})

/** Starts the built server with STORE=rethinkdb; resolves when it exits (killed if it ever starts). */
function start(env: Record<string, string>): Promise<{ code: number | null; output: string; stderr: string }> {
  const child = spawn(process.execPath, [built.main], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      NODE_ENV: 'test',
      STORE: 'rethinkdb',
      RETHINKDB_TIMEOUT: '60',
      ...env
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk)
    if (stdout.includes('plumage started')) child.kill('SIGKILL')
  })
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk)
  })
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output: stdout + stderr, stderr })))
}

const leaks = (output: string) => SECRETS.filter((secret) => output.includes(secret))

describe('a start RethinkDB refuses', () => {
  it('a wrong password: one line with the URL redacted, no password printed', async () => {
    const server = await standInRethinkDb({ password: "the server's own" })
    try {
      const { code, output, stderr } = await start({
        RETHINKDB_URL: `rethinkdb://app:${encodeURIComponent(PASSWORD)}@127.0.0.1:${server.port}/app`
      })
      expect(code).toBe(1)
      expect(stderr).toBe(
        `plumage failed to start: RethinkDB at 127.0.0.1:${server.port} refused the login of user 'app': Wrong password ` +
          `(check the user and password of RETHINKDB_URL rethinkdb://app:***@127.0.0.1:${server.port}/app, or RETHINKDB_PASSWORD_FILE)\n`
      )
      expect(leaks(output)).toEqual([])
    } finally {
      server.close()
    }
  })

  it('the same with the password in RETHINKDB_PASSWORD_FILE', async () => {
    const server = await standInRethinkDb({ password: "the server's own" })
    const file = join(scratch, 'password')
    await writeFile(file, `${PASSWORD}\n`)
    try {
      const { code, output, stderr } = await start({
        RETHINKDB_URL: `rethinkdb://app@127.0.0.1:${server.port}/app`,
        RETHINKDB_PASSWORD_FILE: file
      })
      expect(code).toBe(1)
      expect(stderr).toMatch(
        /^plumage failed to start: RethinkDB at \S+ refused the login of user 'app': Wrong password \(.+\)\n$/
      )
      expect(leaks(output)).toEqual([])
    } finally {
      server.close()
    }
  })

  it('settings that cannot work: one line naming the variable, no password printed', async () => {
    const both = await start({
      RETHINKDB_URL: `rethinkdb://app:${encodeURIComponent(PASSWORD)}@db/app`,
      RETHINKDB_PASSWORD_FILE: join(scratch, 'password')
    })
    expect(both).toEqual({
      code: 1,
      output: both.stderr,
      stderr:
        'plumage failed to start: RETHINKDB_URL holds a password and RETHINKDB_PASSWORD_FILE is set: give the password in one of them only\n'
    })
    const shape = await start({ RETHINKDB_URL: `rethinkdb://app:${encodeURIComponent(PASSWORD)}@db:99999/app` })
    expect(shape.stderr).toBe(
      'plumage failed to start: RETHINKDB_URL must look like rethinkdb://[user:password@]host:28015/db, ' +
        "or rethinkdb://host1:28015,host2:28015/db for a cluster (got 'rethinkdb://app:***@db:99999/app')\n"
    )
    const missing = await start({ RETHINKDB_PASSWORD_FILE: join(scratch, 'missing') })
    expect(missing.stderr).toBe(
      `plumage failed to start: RETHINKDB_PASSWORD_FILE names a file that cannot be read ('${join(scratch, 'missing')}': ENOENT)\n`
    )
    expect(leaks(both.output + shape.output + missing.output)).toEqual([])
  })
})

const withOpenssl = OPENSSL ? describe : describe.skip
if (!OPENSSL)
  process.stderr.write('\nTLS refusal of the built server SKIPPED: no openssl command to make certificates with\n\n')

withOpenssl('a start whose TLS check fails', () => {
  let certificates: TestCertificates
  let server: Server
  let port: number

  beforeAll(async () => {
    certificates = await makeCertificates()
    const pem = (path: string) => readFileSync(path, 'utf8')
    server = createTlsServer({ cert: pem(certificates.serverCert), key: pem(certificates.serverKey) }, (socket) =>
      socket.on('error', () => undefined)
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as { port: number }).port
  }, 30_000)
  afterAll(async () => {
    server?.close()
    await certificates?.remove()
  })

  it('a certificate another CA signed: one line saying which setting to check', async () => {
    const { code, stderr } = await start({
      RETHINKDB_URL: `rethinkdb://127.0.0.1:${port}/app`,
      RETHINKDB_TLS_CA: certificates.otherCa,
      RETHINKDB_TLS_SERVERNAME: SERVER_NAME
    })
    expect(code).toBe(1)
    expect(stderr).toMatch(
      new RegExp(
        `^plumage failed to start: RethinkDB at 127\\.0\\.0\\.1:${port} failed the TLS check: [^\\n]+ ` +
          "\\((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\\); RETHINKDB_TLS_CA must be the CA that signed the server's certificate\\n$"
      )
    )
  })

  it('a CA file that holds no certificate: one line naming the variable', async () => {
    const { code, stderr } = await start({
      RETHINKDB_URL: `rethinkdb://127.0.0.1:${port}/app`,
      RETHINKDB_TLS_CA: certificates.serverKey
    })
    expect({ code, stderr }).toEqual({
      code: 1,
      stderr: 'plumage failed to start: RETHINKDB_TLS_CA must name a PEM certificate (no certificate in the file)\n'
    })
  })
})
