import type { Server as HttpServer } from 'node:http'
import { io as connectClient, type ManagerOptions, type Socket, type SocketOptions } from 'socket.io-client'
import type { App } from '../../../src/application/app.js'
import { allHttpEngines } from '../../support/http-engines.js'
import type { HookContext } from '../../../src/application/hook-context.js'
import { PROTECTED_FIELDS, withoutFields } from '../../../src/application/protected-fields.js'
import { NotAuthenticated } from '../../../src/domain/errors/errors.js'
import type { Data, Params } from '../../../src/domain/service/service.js'
import type { RealtimeOptions } from '../../../src/interfaces/realtime/realtime-transport.js'
import { socketIoTransport } from '../../../src/interfaces/socketio/socketio-transport.js'
import type { Engine } from '../http/http-test-server.js'

export interface TestServer {
  url: string
  http: HttpServer
  close(): Promise<void>
}

/**
 * The server of an HTTP engine (express unless named) on 127.0.0.1:0, serving `app`, with the socket.io transport
 * attached.
 */
export async function startSocketServer(
  app: App,
  options: RealtimeOptions = {},
  engine: Engine = 'express'
): Promise<TestServer> {
  const http = (await allHttpEngines())[engine]!(app, {})
  const socketIo = socketIoTransport(app, http.server, options)
  const running = await http.listen(0, '127.0.0.1')
  return {
    url: running.url,
    http: running.server,
    async close() {
      socketIo.disconnectAll()
      await running.close()
    }
  }
}

/** A connected socket.io client (websocket only, no reconnection unless asked). */
export async function connect(url: string, options: Partial<ManagerOptions & SocketOptions> = {}): Promise<Socket> {
  const socket = connectClient(url, { transports: ['websocket'], reconnection: false, forceNew: true, ...options })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', reject)
  })
  return socket
}

/** Disconnects the sockets and waits until the app has seen every server-side disconnect. */
export async function disconnectAll(app: App, sockets: Socket[]): Promise<void> {
  const closing = sockets.splice(0).filter((socket) => socket.connected)
  if (closing.length === 0) return
  let left = closing.length
  const gone = new Promise<void>((resolve) => {
    const listener = () => {
      if (--left > 0) return
      app.off('disconnect', listener)
      resolve()
    }
    app.on('disconnect', listener)
  })
  for (const socket of closing) socket.disconnect()
  await gone
}

/** Emits and resolves with the ack's arguments, e.g. `[null, result]` or `[errorJson]`. */
export function emitAck(socket: Socket, event: string, ...args: unknown[]): Promise<unknown[]> {
  return new Promise((resolve) => socket.emit(event, ...args, (...answer: unknown[]) => resolve(answer)))
}

export function nextEvent<T = unknown>(socket: Socket, name: string): Promise<T> {
  return new Promise((resolve) => socket.once(name, (data: T) => resolve(data)))
}

/** Collects every payload of `name` until read. */
export function collect(socket: Socket, name: string): unknown[] {
  const seen: unknown[] = []
  socket.on(name, (data: unknown) => seen.push(data))
  return seen
}

const PASSWORD = new Set(['password'])

/** Stand-in for `protect('password')`: strips the field from what external callers receive. */
export const protectPassword = Object.assign(
  (context: HookContext) => {
    if (!context.params.provider) return
    const result = context.result as { data?: unknown } | undefined
    context.dispatch =
      result && Array.isArray(result.data)
        ? { ...result, data: withoutFields(result.data, PASSWORD) }
        : withoutFields(result, PASSWORD)
  },
  { [PROTECTED_FIELDS]: ['password'] }
)

/**
 * A small stand-in for the authentication service (same contract: create → `{accessToken,
 * authentication, user}`, remove = logout, `login`/`logout` app events with the connection).
 * Tokens are `fake.<userId>.<exp>`; passwords are stored in clear (tests only).
 */
export function useFakeAuthentication(app: App, options: { lifetimeMs?: number } = {}): void {
  const users = () => app.service('users')
  const verify = async (token: unknown) => {
    const match = typeof token === 'string' ? /^fake\.(\d+)\.(\d+)$/.exec(token) : null
    if (!match) throw new NotAuthenticated('jwt malformed', { name: 'JsonWebTokenError' })
    if (Number(match[2]) * 1000 < Date.now()) throw new NotAuthenticated('jwt expired', { name: 'TokenExpiredError' })
    const user = await users()
      .get(Number(match[1]))
      .catch(() => {
        throw new NotAuthenticated('Not authenticated')
      })
    return { user, payload: { sub: match[1], exp: Number(match[2]) } }
  }
  const result = (accessToken: string, strategy: string, user: Data, payload: Data) => ({
    accessToken,
    authentication: { strategy, payload },
    user: withoutFields(user, PASSWORD) as Data
  })
  app.use('authentication', {
    async create(data: Data, params: Params) {
      let answer
      if (data.strategy === 'local') {
        const found = (await users().find({ query: { email: data.email }, paginate: false })) as Data[]
        const user = found[0]
        if (!user || user.password !== data.password) throw new NotAuthenticated('Invalid login')
        const exp = Math.floor((Date.now() + (options.lifetimeMs ?? 3_600_000)) / 1000)
        answer = result(`fake.${String(user.id)}.${exp}`, 'local', user, { sub: String(user.id), exp })
      } else if (data.strategy === 'jwt') {
        if (!data.accessToken) throw new NotAuthenticated('No access token')
        const { user, payload } = await verify(data.accessToken)
        answer = result(data.accessToken as string, 'jwt', user, payload)
      } else throw new NotAuthenticated('Invalid authentication information (no `strategy` set)')
      app.emit('login', answer, { provider: params.provider, connection: params.connection })
      return answer
    },
    async remove(id: unknown, params: Params) {
      const token = params.authentication?.accessToken
      if (!token) throw new NotAuthenticated('Invalid authentication information (no `strategy` set)')
      if (id !== null && id !== token) throw new NotAuthenticated('Invalid access token')
      const { user, payload } = await verify(token)
      const answer = result(token, 'jwt', user, payload)
      app.emit('logout', answer, { provider: params.provider, connection: params.connection })
      return answer
    }
  })
  /** `authenticate('jwt')` stand-in for protected services. */
  const authenticate = async (context: HookContext) => {
    if (!context.params.provider) return
    if (!context.params.authentication) throw new NotAuthenticated('Not authenticated')
    const { user } = await verify(context.params.authentication.accessToken)
    context.params.user = user as Data
    context.params.authenticated = true
  }
  users().hooks({ before: { find: [authenticate], get: [authenticate] }, after: { all: [protectPassword] } })
}
