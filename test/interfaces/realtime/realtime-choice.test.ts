import { afterEach, describe, expect, it } from '@jest/globals'
import { startAuthServer, AUTH_SECRET, type AuthServer } from '../../support/auth-server.js'
import { connectSocket } from '../../support/reference-server.js'

/*
 * REALTIME picks the real-time transport the composition root starts on the HTTP engine's server,
 * as src/main.ts does: socket.io by default, none at all with `none` (REST only), and the shared
 * settings reach it (CORS_ORIGINS as the HTTP engines read it).
 */
let server: AuthServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** The first request of a socket.io client (Engine.IO's polling handshake), from a page on `origin`. */
const handshake = (url: string, origin: string) =>
  fetch(`${url}/socket.io/?EIO=4&transport=polling`, { headers: { Origin: origin } })

describe('REALTIME', () => {
  it('starts socket.io by default, beside REST on the same port', async () => {
    server = await startAuthServer({ AUTH_SECRET })
    const socket = await connectSocket(server.url)
    expect(socket.connected).toBe(true)
    socket.disconnect()
    expect((await fetch(`${server.url}/messages`)).status).toBe(401)
  })

  it('starts none with `none`: REST answers, and the socket.io path is just an unknown page', async () => {
    server = await startAuthServer({ AUTH_SECRET, REALTIME: 'none' })
    const answer = await handshake(server.url, 'https://elsewhere.example')
    expect(answer.status).toBe(404)
    expect(await answer.json()).toMatchObject({ name: 'NotFound', message: 'Page not found' })
    await expect(connectSocket(server.url)).rejects.toThrow()
    expect((await fetch(`${server.url}/messages`)).status).toBe(401)
  })

  it.each([
    ['*', 'https://elsewhere.example', 'https://elsewhere.example'],
    ['https://app.example', 'https://app.example', 'https://app.example'],
    ['https://app.example', 'https://elsewhere.example', null]
  ])(
    'with CORS_ORIGINS=%s lets a page on %s connect as REST does: allowed origin %s',
    async (origins, from, allowed) => {
      server = await startAuthServer({ AUTH_SECRET, CORS_ORIGINS: origins })
      const socketIo = await handshake(server.url, from)
      expect(socketIo.status).toBe(200)
      expect(socketIo.headers.get('access-control-allow-origin')).toBe(allowed)
      const rest = await fetch(`${server.url}/users`, { method: 'OPTIONS', headers: { Origin: from } })
      expect(rest.headers.get('access-control-allow-origin')).toBe(allowed)
    }
  )
})
