import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import type { Connection } from '../../src/domain/service/service.js'
import { FakeClock } from '../support/fake-clock.js'
import { authentication } from '../../src/interfaces/client/authentication/authentication-client.js'
import { createClient } from '../../src/interfaces/client/client-app.js'
import { socketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import { collect, connect, disconnectAll, emitAck, nextEvent } from '../interfaces/socketio/support.js'
import { useProtocolServices } from '../interfaces/socketio/test-app.js'
import { ENGINES } from '../interfaces/http/http-test-server.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { gravatar } from '../support/gravatar.js'

/*
 * socket.io against the real reference app as the composition root builds it (bcrypt, jsonwebtoken,
 * authentication service, default channels), with raw socket.io-client frames and with our clients,
 * attached to the server of every HTTP engine. The protocol test services (multi, custom, broken, …)
 * are added next to messages/users.
 */
describe.each(ENGINES)('socket.io on %s', (engine) => {
  const ENV = { AUTH_SECRET, BCRYPT_ROUNDS: '4', HTTP: engine }
  const credentials = { strategy: 'local', email: 'e2e@x.io', password: 'secret-pw' }
  /** The logged-in user as the users service shows them; messages carry them as their author (`user`). */
  const eve = { email: 'e2e@x.io', name: 'Eve', id: 0, avatar: gravatar('e2e@x.io') }
  let server: AuthServer
  const sockets: Socket[] = []

  beforeAll(async () => {
    server = await startAuthServer(ENV)
    useProtocolServices(server.app)
    await server.app.service('users').create({ email: credentials.email, password: credentials.password, name: 'Eve' })
  })
  afterEach(() => disconnectAll(server.app, sockets))
  afterAll(() => server.close())

  async function open(options: Parameters<typeof connect>[1] = {}): Promise<Socket> {
    const socket = await connect(server.url, options)
    sockets.push(socket)
    return socket
  }

  /** A socket logged in with the v5 `create` on authentication; resolves with its access token. */
  async function loggedIn(): Promise<[Socket, string]> {
    const socket = await open()
    const [error, login] = (await emitAck(socket, 'create', 'authentication', credentials, {})) as [
      unknown,
      { accessToken: string }
    ]
    expect(error).toBeNull()
    return [socket, login.accessToken]
  }

  /** Events are written before any later ack on the same socket: after this round trip nothing is in flight. */
  async function settled(socket: Socket): Promise<void> {
    await emitAck(socket, 'get', 'custom', 0, {})
  }

  function rest(method: string, path: string, token: string, body?: unknown): Promise<Response> {
    return fetch(`${server.url}/${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
  }

  describe('service methods over socket.io (reference app)', () => {
    it('runs find, get, create, update, patch and remove on messages with the Feathers argument layout', async () => {
      const [socket] = await loggedIn()
      const [, created] = (await emitAck(socket, 'create', 'messages', { text: 'one' }, {})) as [null, { id: number }]
      expect(created).toEqual({
        text: 'one',
        userId: 0,
        user: eve,
        id: expect.any(Number),
        createdAt: expect.any(String),
        updatedAt: expect.any(String)
      })
      const id = created.id
      expect(await emitAck(socket, 'get', 'messages', id, {})).toEqual([null, created])
      expect(await emitAck(socket, 'get', 'messages', id, { $select: ['text'] })).toEqual([null, { text: 'one', id }])
      expect(await emitAck(socket, 'find', 'messages', { id, $limit: 5 })).toEqual([
        null,
        { total: 1, limit: 5, skip: 0, data: [created] }
      ])
      // Writes record the author (the reference app's policy), so every result carries userId 0.
      const stamps = { createdAt: (created as { createdAt?: string }).createdAt, updatedAt: expect.any(String) }
      expect(await emitAck(socket, 'update', 'messages', id, { text: 'two' }, {})).toEqual([
        null,
        { text: 'two', userId: 0, user: eve, id, ...stamps }
      ])
      expect(await emitAck(socket, 'patch', 'messages', id, { read: true }, {})).toEqual([
        null,
        { text: 'two', userId: 0, user: eve, read: true, id, ...stamps }
      ])
      expect(await emitAck(socket, 'patch', 'messages', null, { tag: 'x' }, { read: true })).toEqual([
        null,
        [{ text: 'two', userId: 0, user: eve, read: true, tag: 'x', id, ...stamps }]
      ])
      expect(await emitAck(socket, 'remove', 'messages', id, {})).toEqual([
        null,
        { text: 'two', userId: 0, user: eve, read: true, tag: 'x', id, ...stamps }
      ])
      expect(await emitAck(socket, 'remove', 'messages', null, { tag: 'x' })).toEqual([null, []])
      expect(await emitAck(socket, 'get', 'messages', id)).toEqual([
        {
          name: 'NotFound',
          message: `No record found for id '${id}'`,
          code: 404,
          className: 'not-found',
          errors: {}
        }
      ])
    })

    it('gives services socket params: provider, handshake headers, route, JSON-typed query, the user after login', async () => {
      const socket = await open({ extraHeaders: { 'x-e2e': 'yes' } })
      const [, before] = (await emitAck(socket, 'find', 'echo', { n: 1, ok: true, none: null })) as [
        null,
        Record<string, unknown>
      ]
      expect(before).toMatchObject({
        provider: 'socketio',
        query: { n: 1, ok: true, none: null },
        route: {},
        hasConnection: true
      })
      expect(before.headers).toMatchObject({ 'x-e2e': 'yes' })
      expect(before).not.toHaveProperty('user')
      expect(await emitAck(socket, 'find', 'users/7/posts', {})).toEqual([null, { userId: '7' }])
      const [, login] = (await emitAck(socket, 'create', 'authentication', credentials, {})) as [
        null,
        { accessToken: string }
      ]
      const [, after] = (await emitAck(socket, 'find', 'echo', {})) as [null, Record<string, unknown>]
      expect(after).toMatchObject({
        authentication: { strategy: 'jwt', accessToken: login.accessToken },
        user: { email: 'e2e@x.io', name: 'Eve', id: 0 }
      })
      expect(JSON.stringify(after)).not.toMatch(/password|\$2b\$/)
    })
  })

  describe('socket authentication (reference app)', () => {
    it('v5: create on authentication answers the login object and authenticates the connection', async () => {
      const socket = await open()
      expect(await emitAck(socket, 'find', 'messages', {})).toEqual([
        {
          name: 'NotAuthenticated',
          message: 'Not authenticated',
          code: 401,
          className: 'not-authenticated',
          errors: {}
        }
      ])
      const [error, login] = (await emitAck(socket, 'create', 'authentication', credentials, {})) as [
        null,
        Record<string, unknown>
      ]
      expect(error).toBeNull()
      expect(login).toEqual({
        accessToken: expect.any(String),
        authentication: {
          strategy: 'local',
          payload: expect.objectContaining({ sub: '0', aud: 'https://yourdomain.com' })
        },
        user: eve,
        refreshToken: expect.any(String)
      })
      expect((await emitAck(socket, 'find', 'messages', {}))[0]).toBeNull()
      const [, again] = (await emitAck(
        socket,
        'create',
        'authentication',
        { strategy: 'jwt', accessToken: login.accessToken },
        {}
      )) as [null, Record<string, unknown>]
      expect(again.accessToken).toBe(login.accessToken)
    })

    it('v3: the authenticate event acks (null, data with accessToken), and the error JSON on failure', async () => {
      const socket = await open()
      const [error, data] = (await emitAck(socket, 'authenticate', credentials)) as [null, Record<string, unknown>]
      expect(error).toBeNull()
      expect(data).toMatchObject({ accessToken: expect.any(String), user: { email: 'e2e@x.io' } })
      expect((await emitAck(socket, 'find', 'users', {}))[0]).toBeNull()
      const other = await open()
      expect(await emitAck(other, 'authenticate', { ...credentials, password: 'wrong' })).toEqual([
        {
          name: 'NotAuthenticated',
          message: 'Invalid login',
          code: 401,
          className: 'not-authenticated',
          errors: {}
        }
      ])
      expect(await emitAck(other, 'authenticate', { strategy: 'jwt', accessToken: 'nope' })).toEqual([
        {
          name: 'NotAuthenticated',
          message: 'jwt malformed',
          code: 401,
          className: 'not-authenticated',
          data: { name: 'JsonWebTokenError' },
          errors: {}
        }
      ])
      expect(await emitAck(other, 'authenticate', 42)).toEqual([
        {
          name: 'NotAuthenticated',
          message: 'Invalid authentication information (no `strategy` set)',
          code: 401,
          className: 'not-authenticated',
          errors: {}
        }
      ])
      expect(await emitAck(other, 'find', 'users', {})).toEqual([
        expect.objectContaining({ code: 401, message: 'Not authenticated' })
      ])
    })

    it('the logout event and remove on authentication forget the login', async () => {
      const [socket, token] = await loggedIn()
      expect(await emitAck(socket, 'logout')).toEqual([null, expect.objectContaining({ accessToken: token })])
      expect(await emitAck(socket, 'logout')).toEqual([null, {}])
      expect((await emitAck(socket, 'find', 'messages', {}))[0]).toMatchObject({ code: 401 })
      const [, again] = (await emitAck(socket, 'authenticate', credentials)) as [null, { accessToken: string }]
      expect(await emitAck(socket, 'remove', 'authentication', 'another-token', {})).toEqual([
        {
          name: 'NotAuthenticated',
          message: 'Invalid access token',
          code: 401,
          className: 'not-authenticated',
          errors: {}
        }
      ])
      expect(await emitAck(socket, 'remove', 'authentication', again.accessToken, {})).toEqual([
        null,
        expect.objectContaining({ accessToken: again.accessToken })
      ])
      expect(await emitAck(socket, 'remove', 'authentication', null, {})).toEqual([
        {
          name: 'NotAuthenticated',
          message: 'Invalid authentication information (no `strategy` set)',
          code: 401,
          className: 'not-authenticated',
          errors: {}
        }
      ])
      expect((await emitAck(socket, 'find', 'messages', {}))[0]).toMatchObject({
        code: 401,
        message: 'Not authenticated'
      })
    })

    it('authenticates at the handshake with the Authorization header; a bad token fails the connection', async () => {
      const [, token] = await loggedIn()
      for (const header of [`Bearer ${token}`, token]) {
        const socket = await open({ extraHeaders: { Authorization: header } })
        const watched = nextEvent(socket, 'messages created')
        const [, created] = await emitAck(socket, 'create', 'messages', { text: 'handshake' }, {})
        expect(await watched).toEqual(created)
      }
      await expect(open({ extraHeaders: { Authorization: 'Bearer not-a-jwt' } })).rejects.toMatchObject({
        message: 'jwt malformed',
        data: { name: 'JsonWebTokenError' }
      })
    })
  })

  describe('socket events and channels (reference app)', () => {
    it('delivers events of socket calls and of REST calls to other authenticated sockets, not to anonymous ones', async () => {
      const [[caller, token], [watcher], anonymous] = [await loggedIn(), await loggedIn(), await open()]
      const toAnonymous = collect(anonymous, 'messages created')
      const fromSocket = nextEvent(watcher, 'messages created')
      const [, created] = await emitAck(caller, 'create', 'messages', { text: 'socket' }, {})
      expect(await fromSocket).toEqual(created)
      const fromRest = nextEvent(watcher, 'messages created')
      const response = await rest('POST', 'messages', token, { text: 'rest' })
      expect(response.status).toBe(201)
      expect(await fromRest).toEqual(await response.json())
      const patched = nextEvent(caller, 'messages patched')
      const removed = nextEvent(watcher, 'messages removed')
      await rest('PATCH', `messages/${(created as { id: number }).id}`, token, { text: 'edited' })
      await rest('DELETE', `messages/${(created as { id: number }).id}`, token)
      expect(await patched).toMatchObject({ text: 'edited' })
      expect(await removed).toMatchObject({ text: 'edited' })
      await settled(anonymous)
      expect(toAnonymous).toEqual([])
    })

    it('sends one event per record for array creates and multi patch/remove; the ack carries the array', async () => {
      const [[caller], [watcher]] = [await loggedIn(), await loggedIn()]
      const created = collect(watcher, 'multi created')
      const patched = collect(watcher, 'multi patched')
      const removed = collect(watcher, 'multi removed')
      const [, records] = (await emitAck(
        caller,
        'create',
        'multi',
        [1, 2, 3].map((n) => ({ n, batch: 'e2e' })),
        {}
      )) as [null, unknown[]]
      expect(records).toHaveLength(3)
      await emitAck(caller, 'patch', 'multi', null, { seen: true }, { batch: 'e2e' })
      await emitAck(caller, 'remove', 'multi', null, { batch: 'e2e', n: { $gte: 2 } })
      await settled(watcher)
      expect(created).toEqual(records)
      expect(patched).toHaveLength(3)
      expect(removed.map((record) => (record as { n: number }).n)).toEqual([2, 3])
      // messages allows multi patch/remove: one event per affected record there too.
      const messagePatches = collect(watcher, 'messages patched')
      for (const text of ['a', 'b']) await emitAck(caller, 'create', 'messages', { text, group: 'multi-e2e' }, {})
      await emitAck(caller, 'patch', 'messages', null, { done: true }, { group: 'multi-e2e' })
      await settled(watcher)
      expect(messagePatches).toEqual([
        expect.objectContaining({ text: 'a', done: true }),
        expect.objectContaining({ text: 'b', done: true })
      ])
    })

    it('delivers custom events declared in the service options', async () => {
      const [[caller], [watcher]] = [await loggedIn(), await loggedIn()]
      const boom = nextEvent(watcher, 'custom boom')
      expect(await emitAck(caller, 'shout', 'custom', { text: 'hey' }, {})).toEqual([null, { shouted: true }])
      expect(await boom).toEqual({ loud: 'hey' })
    })

    it('never sends a password in users events', async () => {
      const [[caller], [watcher]] = [await loggedIn(), await loggedIn()]
      const events = ['created', 'patched', 'updated', 'removed'].map((event) => nextEvent(watcher, `users ${event}`))
      const [, user] = (await emitAck(caller, 'create', 'users', { email: 'pw@x.io', password: 'hunter222' }, {})) as [
        null,
        { id: number }
      ]
      // Users may only change themselves: the caller becomes the new user.
      expect(
        (await emitAck(caller, 'authenticate', { strategy: 'local', email: 'pw@x.io', password: 'hunter222' }))[0]
      ).toBeNull()
      expect((await emitAck(caller, 'patch', 'users', user.id, { password: 'hunter333' }, {}))[0]).toBeNull()
      // The new password logs in (README "Sessions": the change kept this socket's session too).
      expect(
        (await emitAck(caller, 'authenticate', { strategy: 'local', email: 'pw@x.io', password: 'hunter333' }))[0]
      ).toBeNull()
      expect(
        (await emitAck(caller, 'update', 'users', user.id, { email: 'pw@x.io', password: 'hunter444' }, {}))[0]
      ).toBeNull()
      expect(
        (await emitAck(caller, 'authenticate', { strategy: 'local', email: 'pw@x.io', password: 'hunter444' }))[0]
      ).toBeNull()
      expect((await emitAck(caller, 'remove', 'users', user.id, {}))[0]).toBeNull()
      for (const payload of await Promise.all(events))
        expect(payload).toEqual({ email: 'pw@x.io', id: user.id, avatar: gravatar('pw@x.io') })
    })

    it('stops delivering after logout and after disconnect', async () => {
      const [[caller], [watcher]] = [await loggedIn(), await loggedIn()]
      const seen = collect(watcher, 'messages created')
      await emitAck(watcher, 'remove', 'authentication', null, {})
      await emitAck(caller, 'create', 'messages', { text: 'private' }, {})
      await settled(watcher)
      expect(seen).toEqual([])
      const before = server.app.channel('authenticated').length
      const gone = new Promise((resolve) => server.app.once('disconnect', resolve))
      caller.disconnect()
      await gone
      expect(server.app.channel('authenticated').length).toBe(before - 1)
    })
  })

  describe('malformed socket frames (reference app)', () => {
    const error = (name: string, code: number, className: string, message: string) => ({
      name,
      message,
      code,
      className,
      errors: {}
    })
    const cases: [string, unknown[], unknown][] = [
      ['unknown service', ['find', 'nope', {}], error('NotFound', 404, 'not-found', "Service 'nope' not found")],
      ['a path that is not a string', ['find', 42, {}], error('NotFound', 404, 'not-found', 'Invalid service path')],
      [
        'a path that is an object',
        ['find', { path: 'messages' }, {}],
        error('NotFound', 404, 'not-found', 'Invalid service path')
      ],
      [
        'a method of no service',
        ['hidden', 'messages', {}],
        error('MethodNotAllowed', 405, 'method-not-allowed', "Method 'hidden' not allowed on service 'messages'")
      ],
      [
        'a method this service lacks',
        ['update', 'custom', 1, {}, {}],
        error('MethodNotAllowed', 405, 'method-not-allowed', "Method 'update' not allowed on service 'custom'")
      ],
      [
        'a hook-runner name',
        ['hooks', 'messages', {}],
        error('MethodNotAllowed', 405, 'method-not-allowed', "Method 'hooks' not allowed on service 'messages'")
      ],
      [
        'too many arguments',
        ['get', 'multi', 1, {}, {}],
        error('BadRequest', 400, 'bad-request', "Too many arguments for 'get' method")
      ],
      [
        'a string query',
        ['find', 'multi', 'notAnObject'],
        error('BadRequest', 400, 'bad-request', "The query of 'find' must be an object (got string)")
      ],
      [
        'an array query',
        ['find', 'multi', [1, 2]],
        error('BadRequest', 400, 'bad-request', "The query of 'find' must be an object (got an array)")
      ],
      [
        'an unknown query operator',
        ['find', 'multi', { n: { $regex: 'x' } }],
        { ...error('BadRequest', 400, 'bad-request', 'Invalid query parameter $regex'), data: { $regex: 'x' } }
      ],
      [
        'string data',
        ['create', 'multi', 'a string', {}],
        error('BadRequest', 400, 'bad-request', "First parameter for 'create' must be an object")
      ],
      [
        'null data',
        ['create', 'multi', null, {}],
        error('BadRequest', 400, 'bad-request', "First parameter for 'create' must be an object")
      ],
      ['array patch data', ['patch', 'multi', 1, [1], {}], error('BadRequest', 400, 'bad-request', 'No data provided')],
      [
        'an object id',
        ['get', 'multi', { $gt: 1 }, {}],
        error('BadRequest', 400, 'bad-request', "The id of 'get' must be a string or a number (got object)")
      ],
      [
        'update without id',
        ['update', 'multi', null, { a: 1 }, {}],
        error('BadRequest', 400, 'bad-request', "You can not replace multiple instances. Did you mean 'patch'?")
      ],
      [
        'an array create on a service without multi',
        ['create', 'users', [{ email: 'x' }], {}],
        error('MethodNotAllowed', 405, 'method-not-allowed', 'Can not create multiple entries')
      ],
      [
        'a non-framework error',
        ['find', 'broken', {}],
        error('GeneralError', 500, 'general-error', 'Internal server error')
      ]
    ]

    it.each(cases)('acks %s with the exact error JSON', async (_name, args, expected) => {
      const socket = await open()
      const answer = await emitAck(socket, ...(args as [string, ...unknown[]]))
      expect(answer).toEqual([expected])
      expect(JSON.stringify(answer)).not.toMatch(/stack|Secret/)
    })

    it('survives garbage packets, wrong event types and calls without acks, and keeps serving', async () => {
      const broken = await open()
      const closed = new Promise((resolve) => broken.once('disconnect', resolve))
      ;(broken.io.engine as unknown as { write(data: string): void }).write('42["find",')
      await closed
      const socket = await open()
      const raw = socket as unknown as { emit(...args: unknown[]): void }
      raw.emit(7 as unknown as string, 'messages', () => undefined)
      socket.emit('find')
      socket.emit('create', 'multi', { noAck: true }, {})
      socket.emit('authenticate', () => undefined)
      socket.emit('logout', 'not an ack')
      expect(await emitAck(socket, 'find', 'multi', { noAck: true })).toEqual([
        null,
        [expect.objectContaining({ noAck: true })]
      ])
      const bystander = await open()
      expect((await emitAck(bystander, 'find', 'multi', {}))[0]).toBeNull()
    })

    it('closes a connection whose message is over SOCKET_MAX_MESSAGE_SIZE, and only that one', async () => {
      const small = await startAuthServer({ ...ENV, SOCKET_MAX_MESSAGE_SIZE: '2048' })
      const opened = [await connect(small.url), await connect(small.url)]
      try {
        const [big, bystander] = opened as [Socket, Socket]
        const closed = new Promise((resolve) => big.once('disconnect', resolve))
        big.emit('create', 'users', { email: 'big@x.io', password: 'x'.repeat(4096) }, {}, () => undefined)
        expect(await closed).toBe('transport close')
        expect(await emitAck(bystander, 'create', 'users', { email: 'small@x.io', password: 'xxxxxxxx' }, {})).toEqual([
          null,
          { email: 'small@x.io', id: expect.any(Number), avatar: gravatar('small@x.io') }
        ])
      } finally {
        await disconnectAll(small.app, opened)
        await small.close()
      }
    })
  })

  describe('token expiry on a socket (FakeClock)', () => {
    it('logs the connection out when its token expires by the injected clock, so private events stop', async () => {
      // Whole seconds, so the token's exp (seconds) is exactly one JWT lifetime after the clock.
      const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000)
      const timed = await startAuthServer({ ...ENV, JWT_EXPIRES_IN: '1d' }, { clock })
      const opened: Socket[] = []
      try {
        await timed.app.service('users').create({ email: credentials.email, password: credentials.password })
        const { accessToken } = (await timed.app.service('authentication').create(credentials)) as {
          accessToken: string
        }
        // 50 ms before the token's exp by the app's clock: a timer on Date.now() would wait a whole day.
        clock.advance(86_400_000 - 50)
        opened.push(await connect(timed.url), await connect(timed.url))
        const [watcher, caller] = opened as [Socket, Socket]
        const connection = await new Promise<Connection>((resolve) => {
          timed.app.once('login', (_result: unknown, meta: { connection: Connection }) => resolve(meta.connection))
          void emitAck(watcher, 'create', 'authentication', { strategy: 'jwt', accessToken }, {})
        })
        expect(timed.app.channel('authenticated').connections.has(connection)).toBe(true)
        const loggedOut = new Promise((resolve) =>
          timed.app.once('logout', (_result: unknown, meta: { connection: Connection }) => resolve(meta.connection))
        )
        expect(await loggedOut).toBe(connection)
        expect(timed.app.channel('authenticated').connections.has(connection)).toBe(false)
        const seen = collect(watcher, 'users created')
        await emitAck(caller, 'create', 'users', { email: 'later@x.io', password: 'password-1' }, {})
        await emitAck(watcher, 'find', 'echo', {})
        expect(seen).toEqual([])
        expect(watcher.connected).toBe(true)
      } finally {
        await disconnectAll(timed.app, opened)
        await timed.close()
      }
    })
  })

  describe('our socket client + authentication client (reference app)', () => {
    it('calls every method, receives events and logs in again by itself after a reconnect', async () => {
      const socket = await open({ reconnection: true, reconnectionDelay: 10 })
      const client = createClient().configure(socketio(socket)).configure(authentication())
      const watcherSocket = await open()
      const watcher = createClient().configure(socketio(watcherSocket)).configure(authentication())
      await Promise.all([client.authenticate(credentials), watcher.authenticate(credentials)])
      const messages = client.service('messages')
      const created = (await messages.create({ text: 'client' })) as { id: number }
      expect(await messages.get(created.id)).toEqual(created)
      expect(await messages.find({ query: { id: created.id } })).toMatchObject({ total: 1, data: [created] })
      expect(await messages.update(created.id, { text: 'updated' })).toEqual({
        text: 'updated',
        userId: 0,
        user: eve,
        id: created.id,
        createdAt: expect.any(String),
        updatedAt: expect.any(String)
      })
      expect(await messages.patch(created.id, { more: 1 })).toEqual({
        text: 'updated',
        userId: 0,
        user: eve,
        more: 1,
        id: created.id,
        createdAt: expect.any(String),
        updatedAt: expect.any(String)
      })
      await expect(messages.get(-1)).rejects.toMatchObject({
        name: 'NotFound',
        code: 404,
        message: "No record found for id '-1'"
      })
      const shouted = new Promise((resolve) => watcher.service('custom').once('boom', resolve))
      expect(await client.service('custom').methods('shout').shout({ text: 'ok' })).toEqual({ shouted: true })
      expect(await shouted).toEqual({ loud: 'ok' })

      const relogin = new Promise((resolve) => client.once('login', resolve))
      socket.io.engine.close()
      await relogin
      const removed = new Promise((resolve) => watcher.service('messages').once('removed', resolve))
      expect(await messages.remove(created.id)).toMatchObject({ id: created.id })
      expect(await removed).toMatchObject({ id: created.id })
      const afterReconnect = new Promise((resolve) => client.service('messages').once('created', resolve))
      await watcher.service('messages').create({ text: 'to the reconnected client' })
      expect(await afterReconnect).toMatchObject({ text: 'to the reconnected client' })
      await client.logout()
      await expect(messages.find()).rejects.toMatchObject({ name: 'NotAuthenticated', code: 401 })
    })
  })
})
