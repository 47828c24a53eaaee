import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import {
  withAxios,
  withFetch,
  withJquery,
  withRequest,
  withSocket,
  withSuperagent,
  chat
} from '../../examples/use-the-clients.js'
import type { ClientApp } from '../../src/interfaces/client/client-app.js'
import type { SocketioTransport } from '../../src/interfaces/client/socket/socketio-transport.js'
import { startAuthServer, type AuthServer } from '../support/auth-server.js'
import { jqueryInJsdom } from '../support/jquery-in-jsdom.js'

let server: AuthServer
let jquery: ReturnType<typeof jqueryInJsdom>
beforeAll(async () => {
  server = await startAuthServer()
  jquery = jqueryInJsdom(server.url)
})
afterAll(async () => {
  await jquery?.close()
  await server?.close()
})

describe('"Use the clients" against the real server', () => {
  const clients: [string, () => ClientApp][] = [
    ['fetch', () => withFetch(server.url)],
    ['axios', () => withAxios(server.url)],
    ['superagent', () => withSuperagent(server.url)],
    ['jquery', () => withJquery(server.url, jquery.$)],
    ['request', () => withRequest(server.url)],
    ['socket.io', () => withSocket(server.url)]
  ]

  it.each(clients)('signs up, logs in, posts and reads with %s', async (name, make) => {
    const client = make()
    try {
      const email = `${name.replace(/\W/g, '')}@example.com`
      const { user, page } = await chat(client, email, 'secret-pw')
      expect(user).toMatchObject({ email })
      expect(user).not.toHaveProperty('password')
      expect(page).toMatchObject({
        data: expect.arrayContaining([expect.objectContaining({ text: `Hello from ${email}` })])
      })
    } finally {
      if (client.transport?.name === 'socketio') ((client.transport as SocketioTransport).socket as Socket).close()
    }
  })
})
