import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { connect } from 'node:net'
import { io } from 'socket.io-client'
import { ENGINES } from '../interfaces/http/http-test-server.js'
import { buildServer, nextLog, type BuiltServer } from '../support/built-server.js'

/*
 * The built server as `npm start` runs it, in a child process, on every HTTP engine: SIGTERM must
 * stop accepting, let the request in flight finish, close the open websockets' transports (socket.io
 * clients see the connection drop rather than a server-side disconnect, so they reconnect by
 * themselves and resume), tear down and exit 0.
 */
let built: BuiltServer
beforeAll(async () => {
  built = await buildServer('shutdown')
}, 120_000)
afterAll(() => built?.cleanup())

describe.each(ENGINES)('graceful shutdown of the built server on %s', (engine) => {
  it('finishes the request in flight, refuses new connections and exits 0 on SIGTERM', async () => {
    const { child, port, logs, exited } = await built.start({ HTTP: engine })
    const websocket = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], reconnection: false, forceNew: true })
    await new Promise<void>((resolve, reject) =>
      websocket.once('connect', () => resolve()).once('connect_error', reject)
    )
    const dropped = new Promise((resolve) => websocket.once('disconnect', resolve))
    const body = JSON.stringify({ text: 'in flight' })
    const socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    let response = ''
    socket.on('data', (chunk) => {
      response += String(chunk)
    })
    const closed = new Promise((resolve) => socket.once('close', resolve))
    // Headers and half the body: the request is in flight until the rest arrives.
    socket.write(
      `POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`
    )
    await new Promise((resolve) => setImmediate(resolve))

    child.kill('SIGTERM')
    await nextLog(logs, 'shutting down')
    // The listening socket closes a few event-loop turns after the log line (later on a loaded
    // machine): retry for at most 10 s. A connection the kernel queued just before the listener
    // closed is reset rather than refused; both mean no new connection is served.
    let refused = 'connected'
    for (const deadline = Date.now() + 10_000; refused === 'connected' && Date.now() < deadline;) {
      refused = await new Promise<string>((resolve) => {
        const late = connect(port, '127.0.0.1')
        late.once('connect', () => {
          late.destroy()
          setTimeout(() => resolve('connected'), 20)
        })
        late.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'))
      })
    }
    expect(['ECONNREFUSED', 'ECONNRESET']).toContain(refused)

    socket.end(body.slice(5))
    await closed
    expect(response).toMatch(/^HTTP\/1\.1 (201|400|401) /)
    expect(response).toMatch(/content-type: application\/json/i)
    expect(await dropped).toBe('transport close')
    expect(await exited).toBe(0)
  })
})
