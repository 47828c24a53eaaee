import type { LoginResult } from '../../domain/auth/authentication-result.js'
import type { Clock } from '../../domain/clock.js'
import { NotFound } from '../../domain/errors/errors.js'
import type { Connection, Params, Query, ServiceCall } from '../../domain/service/service.js'
import { coreOf, type AppCore } from '../app-core.js'
import type { Delivery } from '../channel.js'
import type { HookContext } from '../hook-context.js'
import { callResult, type CallResult, type Target } from './call.js'
import { ConnectionAuthentication, revocationsOf } from './connection-authentication.js'
import type { CloseReason, ConnectionExtension } from './connection-extension.js'

const AUTHENTICATION_PATH = 'authentication'

const systemClock: Clock = { now: () => Date.now() }
const loginOf = ({ result }: CallResult) => result as LoginResult

export type { CallResult, Target }

/**
 * The application's seam for driving adapters (REST, socket.io, fastify…). A transport translates its
 * wire format into `call`s and, when it keeps connections, reports their lifecycle here (`handshake`,
 * `open`, `close`, `authenticate`, `logout`) and sends what `onDelivery` hands it. Everything else —
 * routing, hooks, events, channels, authentication of connections — happens behind it.
 * Each transport opens its own gateway (`new Gateway(app)`) and closes it when it stops. With a connection
 * extension plugged into the app (connection state recovery), lost connections can come back: see `recovery`.
 */
export class Gateway {
  /** Connections of this transport: handshaking or open. */
  private readonly connections = new Set<Connection>()
  private readonly opened = new WeakSet<Connection>()
  private readonly undeliver: (() => void)[] = []
  private readonly listeners: ((delivery: Delivery) => void)[] = []
  private readonly offsetListeners: ((connection: Connection, offset: string) => void)[] = []
  private auth?: ConnectionAuthentication
  private extension?: ConnectionExtension
  private readonly core: AppCore
  /** Decides when a connection's token has expired: the clock the token service checks `exp` with. */
  private readonly clock: Clock

  /** The gateway of a transport serving `app` (a plumage App). */
  constructor(app: object, options: { clock?: Clock } = {}) {
    this.core = coreOf(app)
    this.clock = options.clock ?? systemClock
  }

  /** The service for a request path; with `{ id: true }` a trailing segment may be the id (REST). */
  resolve(path: string, options: { id?: boolean } = {}): Target | undefined {
    const resolved = this.core.registry.resolve(path, options.id ?? false)
    if (!resolved) return undefined
    const { entry, route, id } = resolved
    return { path: entry.path, methods: entry.methods, route, id }
  }

  /** Runs one call through the hooks (NotFound for an unknown path); `params.provider` names the transport. */
  call(call: ServiceCall): Promise<CallResult> {
    return this.running(call).then(callResult)
  }

  /** `call`, handing the result to `then` in the same microtask: one promise less per call for REST. */
  callThen<R>(call: ServiceCall, then: (result: CallResult) => R): Promise<R> {
    return this.running(call).then((context) => then(callResult(context)))
  }

  /** The call's context once its hooks and method ran. */
  private running(call: ServiceCall): Promise<HookContext> {
    const entry = this.core.registry.get(call.path)
    if (!entry) return Promise.reject(new NotFound(`Service '${call.path}' not found`))
    return this.core.run(entry, call)
  }

  /** The params of a call made on a connection: its members (provider, headers, authentication…) spread in. */
  connectionParams(connection: Connection, query: Query = {}, route: Record<string, string> = {}): Params {
    return { query, route, connection, ...connection }
  }

  /** Before a connection opens: logs it in when it brought an `Authorization` header; rejects if that fails. */
  async handshake(connection: Connection): Promise<void> {
    this.connections.add(connection)
    try {
      await this.authentication().handshake(connection)
    } catch (error) {
      this.connections.delete(connection)
      throw error
    }
  }

  /** A connection is open: the app's `connection` event lets channels pick it up. */
  open(connection: Connection): void {
    this.connections.add(connection)
    this.opened.add(connection)
    this.core.extensions.connection('opened', connection.provider, connection)
    this.core.appEvents.emit('connection', connection)
  }

  /** A connection went away: it leaves every channel, its login is forgotten, the connection extension told. */
  close(connection: Connection, reason: CloseReason = 'closed'): void {
    this.connections.delete(connection)
    this.auth?.forget(connection)
    // A lost connection's session is saved for its recovery elsewhere: a shutdown (app.idle) waits for the save.
    if (this.extension) this.core.track(this.extension.forget(connection, reason).catch(() => undefined))
    if (this.opened.has(connection)) {
      this.opened.delete(connection)
      this.core.extensions.connection('closed', connection.provider, connection)
      this.core.appEvents.emit('disconnect', connection)
    }
  }

  /** The transport dropped a connection of its own for holding more unsent output than allowed (it stopped reading). */
  droppedSlow(transport: string): void {
    this.core.extensions.connection('dropped-slow', transport)
  }

  /** The older `authenticate` event: the same as `create` on the authentication service. */
  authenticate(connection: Connection, payload: unknown): Promise<unknown> {
    return this.authentication().authenticate(connection, payload)
  }

  /** The older `logout` event: like `remove` on the authentication service, `{}` when not logged in. */
  logout(connection: Connection): Promise<unknown> {
    return this.authentication().logout(connection)
  }

  /** Published events for this transport's connections (a connection being restored: after what it missed). */
  onDelivery(listener: (delivery: Delivery) => void): void {
    const { delivered } = this.core.extensions
    const send = (delivery: Delivery) => {
      for (const observe of delivered) observe(delivery.path, delivery.event, delivery.connections.length)
      listener(delivery)
    }
    this.listeners.push(listener)
    this.undeliver.push(
      this.core.serviceEvents.onDelivery((delivery) => {
        // Deliveries to a connection being restored wait until it has what it missed.
        const restoring = this.extension?.restoringAny ? this.extension : undefined
        const ready = (connection: Connection) =>
          this.connections.has(connection) && !restoring?.hold(connection, delivery)
        if (!restoring && delivery.connections.every(ready)) return send(delivery)
        const connections = delivery.connections.filter(ready)
        if (connections.length > 0) send({ ...delivery, connections })
      })
    )
  }

  /** Whether connections of this transport can be recovered: a connection extension is plugged into the app. */
  get recovers(): boolean {
    return this.core.extensions.connectionExtension !== undefined
  }

  /** Offsets to hand to a connection (on login, after a recovery): it has seen every event up to there. */
  onOffset(listener: (connection: Connection, offset: string) => void): void {
    this.offsetListeners.push(listener)
  }

  /** The connection extension (connection state recovery) of this transport; throws without one (see `recovers`). */
  get recovery(): ConnectionExtension {
    const make = this.core.extensions.connectionExtension
    if (!make) throw new Error('This app keeps no event history: connections cannot be recovered')
    // Logins must be bound to connections before recovery restores one.
    this.authentication()
    this.extension ??= make({
      clock: this.clock,
      events: this.core.appEvents,
      verify: (data, provider) =>
        this.call({ path: AUTHENTICATION_PATH, method: 'create', data, params: { provider } }).then(loginOf),
      open: (connection) => this.open(connection),
      missedBy: (connection, events) => this.core.serviceEvents.missedBy(connection, events),
      deliver: (delivery) => this.listeners.forEach((listener) => listener(delivery)),
      seen: (connection, offset) => this.offsetListeners.forEach((listener) => listener(connection, offset))
    })
    return this.extension
  }

  /** The transport stopped: no more deliveries, timers or login tracking. */
  shutdown(): void {
    for (const stop of this.undeliver.splice(0)) stop()
    this.auth?.detach()
    this.auth = undefined
    this.extension?.detach()
    this.extension = undefined
  }

  private authentication(): ConnectionAuthentication {
    this.auth ??= new ConnectionAuthentication(
      {
        events: this.core.appEvents,
        available: () => this.core.registry.get(AUTHENTICATION_PATH) !== undefined,
        call: async (connection, method, data) => {
          const [id, body] = method === 'remove' ? [null, undefined] : [undefined, data]
          const params = this.connectionParams(connection)
          return (await this.call({ path: AUTHENTICATION_PATH, method, id, data: body, params })).result
        },
        revocations: () => revocationsOf(this.core.registry.get(AUTHENTICATION_PATH)?.service)
      },
      (connection) => this.connections.has(connection),
      this.clock
    )
    return this.auth
  }
}
