import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { connect, type Socket } from 'node:net'
import { AUTH_SECRET } from '../support/auth-server.js'
import { buildServer, nextLog, type BuiltServer } from '../support/built-server.js'
import { request, signup } from '../support/reference-server.js'

/*
 * SIGTERM to the built server while 50 requests are provably in flight: each one's headers were
 * parsed (the server answered `100 Continue`) and its body is still on its way. Every one must be
 * answered in full, then the process must exit 0.
 */
const IN_FLIGHT = 50

let built: BuiltServer
beforeAll(async () => {
  built = await buildServer('shutdown-load')
}, 120_000)
afterAll(() => built?.cleanup())

interface Pending {
  socket: Socket
  body: string
  response: Promise<string>
}

/** Sends the head of a request with `Expect: 100-continue` and resolves once the server has taken it. */
async function startRequest(port: number, head: string, body: string): Promise<Pending> {
  const socket = connect(port, '127.0.0.1')
  let received = ''
  let onData: () => void = () => {}
  socket.on('data', (chunk) => {
    received += String(chunk)
    onData()
  })
  const response = new Promise<string>((resolve, reject) => {
    socket.once('close', () => resolve(received.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '')))
    socket.once('error', reject)
  })
  await new Promise<void>((resolve) => {
    onData = () => received.startsWith('HTTP/1.1 100 Continue\r\n\r\n') && resolve()
    socket.write(
      `${head}\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`
    )
  })
  return { socket, body, response }
}

describe('graceful shutdown under load', () => {
  it(`answers all ${IN_FLIGHT} requests in flight at SIGTERM and exits 0`, async () => {
    const { child, port, logs, exited } = await built.start({ AUTH_SECRET, BCRYPT_ROUNDS: '4' })
    const url = `http://127.0.0.1:${port}`
    const { token } = await signup(url, 'shutdown@x.io')
    const ids: number[] = []
    for (let index = 0; index < 10; index++) {
      ids.push(
        ((await request(url, 'POST', '/messages', { token, body: { text: `before ${index}` } })).body as { id: number })
          .id
      )
    }

    const pending = await Promise.all(
      Array.from({ length: IN_FLIGHT }, (_, index) =>
        index % 5 === 0
          ? startRequest(
              port,
              `PATCH /messages/${ids[index / 5]} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}`,
              JSON.stringify({ text: `patched ${index}` })
            )
          : startRequest(
              port,
              `POST /messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}`,
              JSON.stringify({ text: `created ${index}` })
            )
      )
    )

    child.kill('SIGTERM')
    await nextLog(logs, 'shutting down')
    for (const { socket, body } of pending) socket.end(body)
    const responses = await Promise.all(pending.map(({ response }) => response))

    responses.forEach((response, index) => {
      const created = index % 5 !== 0
      expect(response).toMatch(created ? /^HTTP\/1\.1 201 / : /^HTTP\/1\.1 200 /)
      expect(response).toMatch(/content-type: application\/json/i)
      const json = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { text: string }
      expect(json.text).toBe(created ? `created ${index}` : `patched ${index}`)
    })
    expect(await exited).toBe(0)
  }, 60_000)
})
