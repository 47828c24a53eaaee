import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import socketioClientModule from '@feathersjs/socketio-client'
import authClientModule from '@feathersjs/authentication-client'
import { feathers } from '@feathersjs/feathers'
import { io, type Socket } from 'socket.io-client'
import { authentication } from '../../src/interfaces/client/authentication/authentication-client.js'
import { createClient } from '../../src/interfaces/client/client-app.js'
import { socketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import { startAuthServer, type AuthServer } from '../support/auth-server.js'
import { gravatar } from '../support/gravatar.js'

let server: AuthServer
const sockets: Socket[] = []

beforeAll(async () => {
  server = await startAuthServer()
  await server.app.service('users').create({ email: 's@x.io', password: 'secret-pw' })
})
afterAll(async () => {
  for (const socket of sockets) socket.disconnect()
  await server.close()
})

async function connect(options: Parameters<typeof io>[1] = {}): Promise<Socket> {
  const socket = io(server.url, { transports: ['websocket'], forceNew: true, reconnection: false, ...options })
  sockets.push(socket)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', reject)
  })
  return socket
}

function emit(socket: Socket, ...args: unknown[]): Promise<unknown[]> {
  return new Promise((resolve) =>
    socket.emit(String(args[0]), ...args.slice(1), (...answer: unknown[]) => resolve(answer))
  )
}

const credentials = { strategy: 'local', email: 's@x.io', password: 'secret-pw' }

describe('authentication over socket.io (reference app)', () => {
  it('logs in with create, then receives events of authenticated channels', async () => {
    const socket = await connect()
    expect(await emit(socket, 'find', 'messages', {})).toEqual([
      expect.objectContaining({ name: 'NotAuthenticated', message: 'Not authenticated' })
    ])
    const [error, result] = (await emit(socket, 'create', 'authentication', credentials, {})) as [
      null,
      Record<string, unknown>
    ]
    expect(error).toBeNull()
    expect(result).toMatchObject({
      accessToken: expect.any(String),
      authentication: { strategy: 'local' },
      user: { email: 's@x.io', id: 0 }
    })
    const created = new Promise((resolve) => socket.once('users created', resolve))
    await server.app.service('users').create({ email: 'new@x.io', password: 'password-1' })
    expect(await created).toEqual({ email: 'new@x.io', id: expect.any(Number), avatar: gravatar('new@x.io') })
    const [, message] = await emit(socket, 'create', 'messages', { text: 'over socket' }, {})
    expect(message).toMatchObject({ text: 'over socket', userId: 0 })
  })

  it('logs out with remove: the connection forgets the login', async () => {
    const socket = await connect()
    const [, login] = (await emit(socket, 'create', 'authentication', credentials, {})) as [
      null,
      { accessToken: string }
    ]
    const [error, logout] = (await emit(socket, 'remove', 'authentication', null, {})) as [
      null,
      { accessToken: string }
    ]
    expect(error).toBeNull()
    expect(logout.accessToken).toBe(login.accessToken)
    expect(await emit(socket, 'find', 'messages', {})).toEqual([
      expect.objectContaining({ message: 'Not authenticated' })
    ])
  })

  it('supports the v3 authenticate and logout events', async () => {
    const socket = await connect()
    const [error, result] = (await emit(socket, 'authenticate', credentials)) as [null, { accessToken: string }]
    expect(error).toBeNull()
    expect(result.accessToken).toEqual(expect.any(String))
    expect((await emit(socket, 'find', 'messages', {}))[0]).toBeNull()
    expect((await emit(socket, 'authenticate', { ...credentials, password: 'wrong' }))[0]).toMatchObject({
      message: 'Invalid login',
      code: 401
    })
    expect((await emit(socket, 'logout'))[0]).toBeNull()
  })

  it('authenticates at the handshake with an Authorization header; a bad token fails the connection', async () => {
    const { accessToken } = (await server.app.service('authentication').create(credentials)) as { accessToken: string }
    const socket = await connect({ extraHeaders: { Authorization: `Bearer ${accessToken}` } })
    expect((await emit(socket, 'find', 'messages', {}))[0]).toBeNull()
    await expect(connect({ extraHeaders: { Authorization: 'Bearer nope' } })).rejects.toMatchObject({
      message: 'jwt malformed'
    })
  })
})

describe('authentication clients over socket.io', () => {
  it('our client logs in, and logs in again by itself after a reconnect', async () => {
    const socket = io(server.url, { transports: ['websocket'], forceNew: true, reconnectionDelay: 10 })
    sockets.push(socket)
    const client = createClient().configure(socketio(socket)).configure(authentication())
    await client.authenticate(credentials)
    await expect(client.service('messages').find()).resolves.toMatchObject({ total: expect.any(Number) })
    const relogin = new Promise((resolve) => client.once('login', resolve))
    socket.io.engine.close()
    await relogin
    await expect(client.service('messages').find()).resolves.toMatchObject({ total: expect.any(Number) })
    await client.logout()
    await expect(client.service('messages').find()).rejects.toMatchObject({ code: 401 })
  })

  it('@feathersjs/authentication-client with @feathersjs/socketio-client', async () => {
    const socket = io(server.url, { transports: ['websocket'], forceNew: true, reconnection: false })
    sockets.push(socket)
    // The Feathers client is typed against socket.io-client's CommonJS build; the socket is the same at runtime.
    const app = feathers()
      .configure(socketioClientModule.default(socket as unknown as Parameters<typeof socketioClientModule.default>[0]))
      .configure(authClientModule.default({ storage: new authClientModule.MemoryStorage() }))
    const result = await app.authenticate(credentials)
    expect(result.user).toEqual({ email: 's@x.io', id: 0, avatar: gravatar('s@x.io') })
    await expect(app.service('messages').find()).resolves.toMatchObject({ total: expect.any(Number) })
    expect((await app.reAuthenticate(true)).accessToken).toBe(result.accessToken)
    await app.logout()
    await expect(app.service('messages').find()).rejects.toMatchObject({ name: 'NotAuthenticated' })
  })
})
