import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer as createTcpServer, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer, type TlsOptions } from 'node:tls'

/*
 * A stand-in RethinkDB driver port that speaks only the V1_0 handshake, as 2.4 does: the version
 * message, then SCRAM-SHA-256 against the one password it knows (any user name), answering
 * "Wrong password" (error code 12) to any other. A login it accepts gets the server's signature and
 * nothing more: enough for a pool to open, not for a query. Plain TCP, or TLS with `tls`. For tests
 * of credentials and TLS where no real server is at hand (test/e2e/rethinkdb-secured.test.ts uses one).
 */
export interface StandInRethinkDb {
  port: number
  /** The user names of every login attempt, and those it accepted. */
  users: string[]
  accepted: string[]
  close(): void
}

export async function standInRethinkDb({
  password,
  tls
}: {
  password: string
  tls?: TlsOptions
}): Promise<StandInRethinkDb> {
  const users: string[] = []
  const accepted: string[] = []
  const serve = (socket: Socket) => {
    let buffer = Buffer.alloc(0)
    let versionSent = false
    let first: { bare: string; server: string; user: string } | undefined
    const send = (message: object) => socket.write(`${JSON.stringify(message)}\0`)
    socket.on('error', () => undefined)
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      if (!versionSent && buffer.length >= 4) {
        buffer = buffer.subarray(4)
        versionSent = true
        send({ success: true, min_protocol_version: 0, max_protocol_version: 0, server_version: '2.4.4' })
      }
      for (let end = buffer.indexOf(0); versionSent && end >= 0; end = buffer.indexOf(0)) {
        const { authentication } = JSON.parse(buffer.subarray(0, end).toString()) as { authentication?: string }
        buffer = buffer.subarray(end + 1)
        if (authentication === undefined) continue
        if (!first) {
          const bare = authentication.replace(/^n,,/, '')
          const user = /n=([^,]*)/.exec(bare)![1]!
          users.push(user)
          first = {
            bare,
            user,
            server: `r=${/r=([^,]*)/.exec(bare)![1]}${randomBytes(9).toString('base64')},s=${SALT.toString('base64')},i=${ITERATIONS}`
          }
          send({ success: true, authentication: first.server })
          continue
        }
        const withoutProof = authentication.replace(/,p=[^,]*$/, '')
        const proof = Buffer.from(/,p=([^,]*)$/.exec(authentication)?.[1] ?? '', 'base64')
        const signature = verify(password, `${first.bare},${first.server},${withoutProof}`, proof)
        if (signature === undefined) {
          send({ success: false, error: 'Wrong password', error_code: 12 })
          socket.end()
        } else {
          accepted.push(first.user)
          send({ success: true, authentication: `v=${signature}` })
        }
      }
    })
  }
  const server: Server = tls ? createTlsServer(tls, serve) : createTcpServer(serve)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as { port: number }).port, users, accepted, close: () => server.close() }
}

const SALT = Buffer.from('plumage stand-in salt')
const ITERATIONS = 4096

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest()

/** RFC 5802's check of the client's proof; the server's signature (base64) when it holds. */
function verify(password: string, authMessage: string, proof: Buffer): string | undefined {
  const salted = pbkdf2Sync(password, SALT, ITERATIONS, 32, 'sha256')
  const storedKey = createHash('sha256').update(hmac(salted, 'Client Key')).digest()
  const clientSignature = hmac(storedKey, authMessage)
  if (proof.length !== clientSignature.length) return undefined
  const clientKey = Buffer.from(proof.map((byte, index) => byte ^ clientSignature[index]!))
  if (!timingSafeEqual(createHash('sha256').update(clientKey).digest(), storedKey)) return undefined
  return hmac(hmac(salted, 'Server Key'), authMessage).toString('base64')
}
