import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import type { Connection } from '../../../src/domain/service/service.js'
import { connect, disconnectAll, emitAck, startSocketServer, type TestServer } from './support.js'
import { gravatar } from '../../support/gravatar.js'
import { createSocketTestApp } from './test-app.js'
import { ENGINES } from '../http/http-test-server.js'

/** The socket.io transport on the server of every HTTP engine. */
describe.each(ENGINES)('socket authentication on %s', (engine) => {
  const lifetime = { lifetimeMs: 3_600_000 }
  const { app } = createSocketTestApp(lifetime)
  let server: TestServer
  const sockets: Socket[] = []
  const credentials = { strategy: 'local', email: 'a@x.io', password: 'secret-pw' }

  async function open(options = {}): Promise<Socket> {
    const socket = await connect(server.url, options)
    sockets.push(socket)
    return socket
  }

  /** The connection as the server sees it, read through a call (the echo service returns params). */
  async function seen(socket: Socket): Promise<Record<string, unknown>> {
    const [, params] = await emitAck(socket, 'find', 'echo', {})
    return params as Record<string, unknown>
  }

  beforeAll(async () => {
    await app.service('users').create({ email: 'a@x.io', password: 'secret-pw', name: 'Alice' })
    server = await startSocketServer(app, {}, engine)
  })
  afterEach(() => disconnectAll(app, sockets))
  afterAll(() => server.close())

  describe('socket authentication (v5: create on authentication)', () => {
    it('authenticates the connection: later calls carry authentication and the protected user', async () => {
      const socket = await open()
      expect(await emitAck(socket, 'find', 'users', {})).toEqual([
        expect.objectContaining({ name: 'NotAuthenticated', code: 401 })
      ])
      const [error, login] = (await emitAck(socket, 'create', 'authentication', credentials, {})) as [
        null,
        Record<string, unknown>
      ]
      expect(error).toBeNull()
      expect(login).toMatchObject({
        accessToken: expect.any(String),
        authentication: { strategy: 'local' },
        user: { email: 'a@x.io', id: 0 }
      })
      expect(JSON.stringify(login)).not.toContain('secret')
      const params = await seen(socket)
      expect(params.keys).toEqual(['query', 'route', 'connection', 'provider', 'headers', 'authentication', 'user'])
      expect(params.authentication).toEqual({ strategy: 'jwt', accessToken: login.accessToken })
      expect(params.user).toEqual({ email: 'a@x.io', name: 'Alice', id: 0, avatar: gravatar('a@x.io') })
      const [, page] = (await emitAck(socket, 'find', 'users', {})) as [null, { data: unknown[] }]
      expect(page.data).toEqual([{ email: 'a@x.io', name: 'Alice', id: 0, avatar: gravatar('a@x.io') }])
    })

    it('logs out with remove on authentication: auth cleared, channels left, protected calls 401', async () => {
      const socket = await open()
      const [, login] = (await emitAck(socket, 'create', 'authentication', credentials, {})) as [
        null,
        { accessToken: string }
      ]
      expect(app.channel('authenticated').length).toBe(1)
      expect(await emitAck(socket, 'remove', 'authentication', null, {})).toEqual([
        null,
        expect.objectContaining({ accessToken: login.accessToken })
      ])
      expect(app.channel('authenticated').length).toBe(0)
      expect(await seen(socket)).not.toHaveProperty('authentication')
      expect(await emitAck(socket, 'find', 'users', {})).toEqual([
        expect.objectContaining({ message: 'Not authenticated' })
      ])
      expect(await emitAck(socket, 'remove', 'authentication', null, {})).toEqual([
        expect.objectContaining({
          code: 401,
          message: 'Invalid authentication information (no `strategy` set)'
        })
      ])
    })

    it('acks a failed login with the NotAuthenticated JSON', async () => {
      const socket = await open()
      expect(await emitAck(socket, 'create', 'authentication', { ...credentials, password: 'wrong' }, {})).toEqual([
        {
          name: 'NotAuthenticated',
          message: 'Invalid login',
          code: 401,
          className: 'not-authenticated',
          errors: {}
        }
      ])
    })

    it('logs the connection out when its token expires', async () => {
      const socket = await open()
      const connection = new Promise<Connection>((resolve) => app.once('connection', resolve))
      const other = await open()
      const loggedOut = new Promise((resolve) =>
        app.once('logout', (_result: unknown, meta: { connection: Connection }) => resolve(meta.connection))
      )
      lifetime.lifetimeMs = 1000
      await emitAck(other, 'create', 'authentication', credentials, {}).finally(() => {
        lifetime.lifetimeMs = 3_600_000
      })
      expect(await loggedOut).toBe(await connection)
      expect(await seen(other)).not.toHaveProperty('authentication')
      expect(app.channel('authenticated').length).toBe(0)
      expect(socket.connected).toBe(true)
    })
  })

  describe('socket authentication (v3: authenticate and logout events)', () => {
    it('authenticate acks (null, login object) and authenticates the connection', async () => {
      const socket = await open()
      const [error, login] = (await emitAck(socket, 'authenticate', credentials)) as [null, Record<string, unknown>]
      expect(error).toBeNull()
      expect(login).toMatchObject({ accessToken: expect.any(String), user: { email: 'a@x.io' } })
      expect(await seen(socket)).toMatchObject({ authentication: { strategy: 'jwt', accessToken: login.accessToken } })
      const [, again] = (await emitAck(socket, 'authenticate', {
        strategy: 'jwt',
        accessToken: login.accessToken
      })) as [null, Record<string, unknown>]
      expect(again.accessToken).toBe(login.accessToken)
    })

    it('authenticate acks the error JSON on failure and treats a non-object payload as {}', async () => {
      const socket = await open()
      expect(await emitAck(socket, 'authenticate', { ...credentials, password: 'nope' })).toEqual([
        expect.objectContaining({ name: 'NotAuthenticated', message: 'Invalid login' })
      ])
      expect(await emitAck(socket, 'authenticate', 'not an object')).toEqual([expect.objectContaining({ code: 401 })])
      expect(await emitAck(socket, 'authenticate')).toEqual([expect.objectContaining({ code: 401 })])
    })

    it('logout acks (null, {}) when not authenticated and clears an authenticated connection', async () => {
      const socket = await open()
      expect(await emitAck(socket, 'logout')).toEqual([null, {}])
      const [, login] = (await emitAck(socket, 'authenticate', credentials)) as [null, { accessToken: string }]
      expect(await emitAck(socket, 'logout')).toEqual([
        null,
        expect.objectContaining({ accessToken: login.accessToken })
      ])
      expect(await seen(socket)).not.toHaveProperty('authentication')
      expect(app.channel('authenticated').length).toBe(0)
    })
  })

  describe('socket authentication (handshake Authorization header)', () => {
    it('authenticates before connect and joins the authenticated channel at once', async () => {
      const first = await open()
      const [, login] = (await emitAck(first, 'authenticate', credentials)) as [null, { accessToken: string }]
      for (const header of [`Bearer ${login.accessToken}`, login.accessToken, `JWT ${login.accessToken}`]) {
        const socket = await open({ extraHeaders: { authorization: header } })
        expect(await seen(socket)).toMatchObject({
          authentication: { strategy: 'jwt', accessToken: login.accessToken },
          user: { id: 0 }
        })
      }
      expect(app.channel('anonymous').connections.size).toBe(0)
    })

    it('refuses the connection for a bad token with the error message and data', async () => {
      const error = await connect(server.url, { extraHeaders: { authorization: 'Bearer not-a-jwt' } }).catch(
        (thrown: unknown) => thrown
      )
      expect(error).toMatchObject({ message: 'jwt malformed', data: { name: 'JsonWebTokenError' } })
    })
  })
})
