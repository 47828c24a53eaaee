import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { startAuthServer, type AuthServer } from '../support/auth-server.js'

/*
 * An unchanged feathers-chat frontend loads the socket.io client from the server it talks to
 * (`<script src="/socket.io/socket.io.js">`): the server serves it, on either HTTP engine.
 */
describe.each(['express', 'fastify'])('GET /socket.io/socket.io.js on %s', (engine) => {
  let server: AuthServer
  beforeAll(async () => {
    server = await startAuthServer({ HTTP: engine })
  })
  afterAll(() => server.close())

  it('answers 200 with the socket.io client script', async () => {
    const response = await fetch(`${server.url}/socket.io/socket.io.js`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/javascript/)
    const script = await response.text()
    expect(script).toContain('Socket.IO')
    expect(script).toMatch(/\bio\b/)
  })
})
