import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import authClientModule from '@feathersjs/authentication-client'
import { feathers, type Application } from '@feathersjs/feathers'
import socketioClientModule from '@feathersjs/socketio-client'
import type { Socket } from 'socket.io-client'
import { createClient } from '../../src/interfaces/client/client-app.js'
import { socketio as plumageSocketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import { collect, connect, disconnectAll, emitAck } from '../interfaces/socketio/support.js'
import { useProtocolServices } from '../interfaces/socketio/test-app.js'
import { ENGINES } from '../interfaces/http/http-test-server.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { gravatar } from '../support/gravatar.js'

/*
 * The official clients, unchanged: @feathersjs/feathers + @feathersjs/socketio-client +
 * @feathersjs/authentication-client over socket.io-client, against the real reference app on every
 * HTTP engine (socket.io attached to its server).
 */

// CommonJS packages whose `module.exports` also carries the ESM `default`.
const socketioClient = socketioClientModule.default
const authClient = authClientModule.default
type FeathersSocket = Parameters<typeof socketioClient>[0]

describe.each(ENGINES)('official Feathers clients on %s', (engine) => {
  const credentials = { strategy: 'local', email: 'official@x.io', password: 'secret-pw' }
  /** The logged-in user as messages carry them (`user`, resolved by the server). */
  const author = { email: 'official@x.io', id: 0, avatar: gravatar('official@x.io') }
  let server: AuthServer
  const sockets: Socket[] = []

  beforeAll(async () => {
    server = await startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4', HTTP: engine })
    useProtocolServices(server.app)
    await server.app.service('users').create({ email: credentials.email, password: credentials.password })
  })
  afterEach(() => disconnectAll(server.app, sockets))
  afterAll(() => server.close())

  interface Client {
    app: Application
    socket: Socket
  }

  /** A Feathers client app over its own socket; `custom` is registered with its custom method and event. */
  async function client(options: Parameters<typeof connect>[1] = {}): Promise<Client> {
    const socket = await connect(server.url, options)
    sockets.push(socket)
    // The Feathers client is typed against socket.io-client's CommonJS build; the socket is the same at runtime.
    const app = feathers()
      .configure(socketioClient(socket as unknown as FeathersSocket))
      .configure(authClient({ storage: new authClientModule.MemoryStorage() }))
    app.use('custom', (app as unknown as { defaultService(path: string): never }).defaultService('custom'), {
      methods: ['get', 'shout'],
      events: ['boom']
    })
    return { app, socket }
  }

  async function loggedIn(options: Parameters<typeof connect>[1] = {}): Promise<Client> {
    const result = await client(options)
    await result.app.authenticate(credentials)
    return result
  }

  /** `custom` as registered in `client`: the Feathers types do not know its custom method. */
  function custom(app: Application): { get(id: number): Promise<unknown>; shout(data: unknown): Promise<unknown> } {
    return app.service('custom') as never
  }

  function nextServiceEvent(app: Application, path: string, event: string): Promise<unknown> {
    return new Promise((resolve) => app.service(path).once(event, resolve))
  }

  /** Events are written before any later ack on the same socket: after this round trip nothing is in flight. */
  async function settled({ app }: Client): Promise<void> {
    await custom(app).get(0)
  }

  describe('@feathersjs/socketio-client against the reference app', () => {
    it('runs the six methods on messages', async () => {
      const { app } = await loggedIn()
      const messages = app.service('messages')
      const created = await messages.create({ text: 'official' })
      expect(created).toEqual({
        text: 'official',
        userId: 0,
        user: author,
        id: expect.any(Number),
        createdAt: expect.any(String),
        updatedAt: expect.any(String)
      })
      expect(await messages.get(created.id)).toEqual(created)
      expect(await messages.find({ query: { id: created.id, $select: ['text'] } })).toEqual({
        total: 1,
        limit: 10,
        skip: 0,
        data: [{ text: 'official', id: created.id }]
      })
      const stamps = { createdAt: created.createdAt, updatedAt: expect.any(String) }
      expect(await messages.update(created.id, { text: 'replaced' })).toEqual({
        text: 'replaced',
        userId: 0,
        user: author,
        id: created.id,
        ...stamps
      })
      expect(await messages.patch(created.id, { read: true })).toEqual({
        text: 'replaced',
        userId: 0,
        user: author,
        read: true,
        id: created.id,
        ...stamps
      })
      expect(await messages.patch(null, { tag: 'o' }, { query: { id: created.id } })).toEqual([
        { text: 'replaced', userId: 0, user: author, read: true, tag: 'o', id: created.id, ...stamps }
      ])
      expect(await messages.remove(created.id)).toMatchObject({ id: created.id })
      expect(await messages.remove(null, { query: { tag: 'o' } })).toEqual([])
      expect(await custom(app).shout({ text: 'hi' })).toEqual({ shouted: true })
    })

    it('rejects with the error class rebuilt from the ack JSON', async () => {
      const { app } = await client()
      await expect(app.service('messages').find()).rejects.toMatchObject({
        name: 'NotAuthenticated',
        code: 401,
        className: 'not-authenticated',
        message: 'Not authenticated'
      })
      await expect(app.service('nope').find()).rejects.toMatchObject({
        name: 'NotFound',
        code: 404,
        message: "Service 'nope' not found"
      })
      await expect(app.service('custom').update(1, {})).rejects.toMatchObject({
        name: 'MethodNotAllowed',
        code: 405,
        message: "Method 'update' not allowed on service 'custom'"
      })
      await expect(app.service('multi').find({ query: { n: { $regex: 'x' } } })).rejects.toMatchObject({
        name: 'BadRequest',
        code: 400,
        data: { $regex: 'x' }
      })
      await expect(app.service('multi').get(999)).rejects.toMatchObject({
        name: 'NotFound',
        message: "No record found for id '999'"
      })
      const failure = (await app
        .service('broken')
        .find()
        .catch((error: unknown) => error)) as Record<string, unknown>
      expect(failure).toMatchObject({ name: 'GeneralError', code: 500, message: 'Internal server error' })
      expect(JSON.stringify(failure)).not.toMatch(/Secret/)
    })
  })

  describe('@feathersjs/authentication-client over socket.io', () => {
    it('logs in (v5 create), re-authenticates with the same token and logs out', async () => {
      const { app } = await client()
      const result = await app.authenticate(credentials)
      expect(result).toMatchObject({
        accessToken: expect.any(String),
        authentication: { strategy: 'local' },
        user: { email: credentials.email, id: 0 }
      })
      expect(result.user).not.toHaveProperty('password')
      expect((await app.reAuthenticate(true)).accessToken).toBe(result.accessToken)
      await expect(app.service('messages').find()).resolves.toMatchObject({ total: expect.any(Number) })
      await app.logout()
      await expect(app.service('messages').find()).rejects.toMatchObject({ name: 'NotAuthenticated' })
      await expect(app.authenticate({ ...credentials, password: 'wrong' })).rejects.toMatchObject({
        name: 'NotAuthenticated',
        message: 'Invalid login',
        code: 401
      })
    })

    it('shares the connection with the v3 authenticate event sent on the same socket', async () => {
      const { app, socket } = await client()
      const [error, data] = (await emitAck(socket, 'authenticate', credentials)) as [null, { accessToken: string }]
      expect(error).toBeNull()
      expect(data.accessToken).toEqual(expect.any(String))
      await expect(app.service('messages').find()).resolves.toMatchObject({ total: expect.any(Number) })
      expect(await emitAck(socket, 'logout')).toEqual([
        null,
        expect.objectContaining({ accessToken: data.accessToken })
      ])
      await expect(app.service('messages').find()).rejects.toMatchObject({ code: 401 })
    })

    it('uses a connection authenticated at the handshake with the Authorization header', async () => {
      const { accessToken } = (await server.app.service('authentication').create(credentials)) as {
        accessToken: string
      }
      const watcher = await client({ extraHeaders: { Authorization: `Bearer ${accessToken}` } })
      const created = nextServiceEvent(watcher.app, 'messages', 'created')
      const message = await watcher.app.service('messages').create({ text: 'handshake' })
      expect(await created).toEqual(message)
    })

    it('logs in again by itself after a reconnect and keeps receiving events', async () => {
      const reconnecting = await loggedIn({ reconnection: true, reconnectionDelay: 10 })
      const other = await loggedIn()
      const relogin = new Promise((resolve) => reconnecting.app.once('login', resolve))
      reconnecting.socket.io.engine.close()
      await relogin
      const created = nextServiceEvent(reconnecting.app, 'messages', 'created')
      const message = await other.app.service('messages').create({ text: 'after reconnect' })
      expect(await created).toEqual(message)
      await expect(reconnecting.app.service('messages').get(message.id)).resolves.toEqual(message)
    })
  })

  describe('events through the official client', () => {
    it('reaches a second client from socket calls and from REST calls', async () => {
      const [caller, watcher] = [await loggedIn(), await loggedIn()]
      const fromSocket = nextServiceEvent(watcher.app, 'messages', 'created')
      const message = await caller.app.service('messages').create({ text: 'socket' })
      expect(await fromSocket).toEqual(message)
      const token = ((await caller.app.get('authentication')) as { accessToken: string }).accessToken
      const fromRest = nextServiceEvent(watcher.app, 'messages', 'patched')
      const response = await fetch(`${server.url}/messages/${message.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'rest' })
      })
      expect(response.status).toBe(200)
      expect(await fromRest).toEqual(await response.json())
    })

    it('arrive once per record for array creates and multi patch/remove', async () => {
      const [caller, watcher] = [await loggedIn(), await loggedIn()]
      const seen: Record<string, unknown[]> = { created: [], patched: [], removed: [] }
      for (const event of Object.keys(seen))
        watcher.app.service('multi').on(event, (data: unknown) => seen[event]!.push(data))
      const records = await caller.app.service('multi').create([
        { n: 1, batch: 'official' },
        { n: 2, batch: 'official' }
      ])
      await caller.app.service('multi').patch(null, { seen: true }, { query: { batch: 'official' } })
      await caller.app.service('multi').remove(null, { query: { batch: 'official' } })
      await settled(watcher)
      expect(seen.created).toEqual(records)
      expect(seen.patched).toHaveLength(2)
      expect(seen.removed).toEqual([
        { n: 1, batch: 'official', seen: true, id: records[0].id },
        { n: 2, batch: 'official', seen: true, id: records[1].id }
      ])
    })

    it('give a listener the record first; the recovery offset comes second, as socket.io-client keeps it', async () => {
      const [caller, watcher] = [await loggedIn(), await loggedIn()]
      const received = new Promise<unknown[]>((resolve) =>
        watcher.app.service('messages').once('created', (...args: unknown[]) => resolve(args))
      )
      const message = await caller.app.service('messages').create({ text: 'arguments' })
      const [record, offset, ...more] = await received
      // A listener written `(message) => …`, as Feathers apps write them, gets exactly the record.
      expect(record).toEqual(message)
      expect(more).toEqual([])
      // The one extra argument (docs/wire-compatibility.md): an opaque string, the offset the socket resumes from.
      expect(typeof offset).toBe('string')
      expect((watcher.socket as unknown as { _lastOffset?: string })._lastOffset).toBe(offset)
    })

    it("give plumage's own client's listeners only the record (it keeps the offset to socket.io-client)", async () => {
      const caller = await loggedIn()
      const socket = await connect(server.url)
      sockets.push(socket)
      const own = createClient().configure(plumageSocketio(socket))
      await emitAck(socket, 'create', 'authentication', credentials, {})
      const received = new Promise<unknown[]>((resolve) =>
        own.service('messages').once('created', (...args: unknown[]) => resolve(args))
      )
      const message = await caller.app.service('messages').create({ text: 'own client' })
      expect(await received).toEqual([message])
    })

    it('delivers custom events declared in the service options', async () => {
      const [caller, watcher] = [await loggedIn(), await loggedIn()]
      const boom = nextServiceEvent(watcher.app, 'custom', 'boom')
      await custom(caller.app).shout({ text: 'loud' })
      expect(await boom).toEqual({ loud: 'loud' })
    })

    it('sends nothing to an anonymous client or after logout, and users events carry no password', async () => {
      const [caller, watcher, anonymous] = [await loggedIn(), await loggedIn(), await client()]
      const toAnonymous = collect(anonymous.socket, 'users created')
      const created = nextServiceEvent(watcher.app, 'users', 'created')
      const user = await caller.app.service('users').create({ email: 'nopw@x.io', password: 'hunter222' })
      expect(user).toEqual({ email: 'nopw@x.io', id: expect.any(Number), avatar: gravatar('nopw@x.io') })
      expect(await created).toEqual(user)
      await watcher.app.logout()
      const afterLogout = collect(watcher.socket, 'messages created')
      await caller.app.service('messages').create({ text: 'private' })
      await Promise.all([settled(watcher), settled(anonymous)])
      expect(afterLogout).toEqual([])
      expect(toAnonymous).toEqual([])
    })
  })
})

describe('official Feathers client events without connection state recovery (SOCKET_RECOVERY_WINDOW=0)', () => {
  let server: AuthServer
  const sockets: Socket[] = []
  beforeAll(async () => {
    server = await startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4', SOCKET_RECOVERY_WINDOW: '0' })
    await server.app.service('users').create({ email: 'norecovery@x.io', password: 'secret-pw' })
  })
  afterAll(async () => {
    await disconnectAll(server.app, sockets)
    await server.close()
  })

  it('give a listener only the record, as Feathers v5 does', async () => {
    const socket = await connect(server.url)
    sockets.push(socket)
    const app = feathers()
      .configure(socketioClient(socket as unknown as FeathersSocket))
      .configure(authClient({ storage: new authClientModule.MemoryStorage() }))
    await app.authenticate({ strategy: 'local', email: 'norecovery@x.io', password: 'secret-pw' })
    const received = new Promise<unknown[]>((resolve) =>
      app.service('messages').once('created', (...args: unknown[]) => resolve(args))
    )
    const message = await app.service('messages').create({ text: 'no offset' })
    expect(await received).toEqual([message])
  })
})
