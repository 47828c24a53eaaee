import type { LoginResult } from '../../domain/auth/authentication-result.js'
import type { Clock } from '../../domain/clock.js'
import { NotFound } from '../../domain/errors/errors.js'
import { errorOutcome, type Metrics } from '../../domain/metrics.js'
import type { Connection, Params, Query, ServiceCall } from '../../domain/service/service.js'
import type { Tracer } from '../../domain/tracing.js'
import type { AppCore } from '../app-core.js'
import type { Delivery } from '../channel.js'
import type { HookContext } from '../hook-context.js'
import type { ServiceEntry } from '../service-entry.js'
import { ConnectionAuthentication, type RevocationCheck } from './connection-authentication.js'
import { ConnectionRecovery, type CloseReason, type Restorable } from './connection-recovery.js'

const AUTHENTICATION_PATH = 'authentication'

/** A request path resolved to a service. */
export interface Target {
  /** The service's registered path (e.g. `users/:userId/posts`). */
  readonly path: string
  /** The methods external callers may use. */
  readonly methods: readonly string[]
  /** Values of the path's `:placeholders`, still percent-encoded as they arrived. */
  readonly route: Record<string, string>
  /** A trailing id segment (only when resolved with `{ id: true }`), as it arrived. */
  readonly id?: string
}

/** What a call answers: the result for the caller (a `protect`ed copy when hooks made one), and HTTP hints. */
export interface CallResult {
  result: unknown
  /** Set by a hook through `context.http.status`. */
  status?: number
  /** Set by a hook through `context.http.location`: answer with a redirect. */
  location?: string
}

/** What a call answers, read off its context once the hooks ran. */
function callResult(context: HookContext): CallResult {
  const { status, location } = context.http
  return { result: context.dispatch ?? context.result, status, location }
}

/**
 * The application's seam for driving adapters (REST, socket.io, fastify…). A transport translates its
 * wire format into `call`s and, when it keeps connections, reports their lifecycle here (`handshake`,
 * `open`, `close`, `authenticate`, `logout`) and sends what `onDelivery` hands it. Everything else —
 * routing, hooks, events, channels, authentication of connections — happens behind it.
 * Each transport opens its own gateway (`app.gateway()`) and closes it when it stops.
 */
export class Gateway {
  /** Connections of this transport: handshaking or open. */
  private readonly connections = new Set<Connection>()
  private readonly opened = new WeakSet<Connection>()
  private readonly undeliver: (() => void)[] = []
  private readonly listeners: ((delivery: Delivery) => void)[] = []
  private readonly offsetListeners: ((connection: Connection, offset: string) => void)[] = []
  private auth?: ConnectionAuthentication
  private recovery?: ConnectionRecovery

  /**
   * `clock` decides when a connection's token has expired: the clock the token service checks `exp`
   * with.
   */
  constructor(
    private readonly core: AppCore,
    private readonly clock: Clock
  ) {}

  /** Where a transport opens the server span of a request or call (the app's tracer; `noTracer` when off). */
  get tracer(): Tracer {
    return this.core.tracer
  }

  /** Where a transport counts what only it sees (e.g. a connection dropped for not reading). */
  get metrics(): Metrics {
    return this.core.metrics
  }

  /** The service for a request path; with `{ id: true }` a trailing segment may be the id (REST). */
  resolve(path: string, options: { id?: boolean } = {}): Target | undefined {
    const resolved = this.core.registry.resolve(path, options.id ?? false)
    if (!resolved) return undefined
    const { entry, route, id } = resolved
    return { path: entry.path, methods: entry.methods, route, id }
  }

  /**
   * Runs one call through the hooks; rejects with NotFound for an unknown path. `path` is a registered
   * one (`Target.path`), and `params.provider` must name the transport: external calls reach only the
   * exposed methods.
   */
  call(call: ServiceCall): Promise<CallResult> {
    return this.running(call).then(callResult)
  }

  /**
   * `call`, handing the result to `then` as soon as the call settled, in the same turn of the microtask queue, and
   * resolving with what `then` returns: for a transport that writes its answer right there (REST), one promise less
   * per call than a `then` on `call`'s.
   */
  callThen<R>(call: ServiceCall, then: (result: CallResult) => R): Promise<R> {
    return this.running(call).then((context) => then(callResult(context)))
  }

  /** The call's context once its hooks and method ran. */
  private running(call: ServiceCall): Promise<HookContext> {
    const entry = this.core.registry.get(call.path)
    if (!entry) return Promise.reject(new NotFound(`Service '${call.path}' not found`))
    const { metrics } = this.core
    // Timed when metrics are on (see `measured`); off, the call pays nothing but this test.
    return metrics.enabled ? this.measured(entry, call, metrics) : this.core.run(entry, call)
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
    this.core.metrics.connectionOpened(connection.provider)
    this.core.appEvents.emit('connection', connection)
  }

  /**
   * A connection went away: it leaves every channel and its login is forgotten. Its session is
   * removed when it was closed on purpose, kept for the recovery window when it was lost.
   */
  close(connection: Connection, reason: CloseReason = 'closed'): void {
    this.connections.delete(connection)
    this.auth?.forget(connection)
    // A lost connection's session is saved for its recovery elsewhere: a shutdown (app.idle) waits for the save.
    if (this.recovery) this.core.track(this.recovery.forget(connection, reason).catch(() => undefined))
    if (this.opened.has(connection)) {
      this.opened.delete(connection)
      this.core.metrics.connectionClosed(connection.provider)
      this.core.appEvents.emit('disconnect', connection)
    }
  }

  /** The older `authenticate` event: the same as `create` on the authentication service. */
  authenticate(connection: Connection, payload: unknown): Promise<unknown> {
    return this.authentication().authenticate(connection, payload)
  }

  /** The older `logout` event: like `remove` on the authentication service, `{}` when not logged in. */
  logout(connection: Connection): Promise<unknown> {
    return this.authentication().logout(connection)
  }

  /**
   * Published events for this transport's connections; other transports' connections are filtered
   * out, and a connection being recovered gets its live events after what it missed.
   */
  onDelivery(listener: (delivery: Delivery) => void): void {
    const { metrics } = this.core
    this.listeners.push(listener)
    this.undeliver.push(
      this.core.serviceEvents.onDelivery((delivery) => {
        // Deliveries to a connection being restored wait until it has what it missed.
        const recovery = this.recovery?.restoringAny ? this.recovery : undefined
        const ready = (connection: Connection) =>
          this.connections.has(connection) && !recovery?.hold(connection, delivery)
        if (!recovery && delivery.connections.every(ready)) {
          metrics.eventDelivered(delivery.path, delivery.event, delivery.connections.length)
          return listener(delivery)
        }
        const connections = delivery.connections.filter(ready)
        if (connections.length === 0) return
        metrics.eventDelivered(delivery.path, delivery.event, connections.length)
        listener({ ...delivery, connections })
      })
    )
  }

  /** Whether connections of this transport can be recovered: the app keeps an event history and sessions. */
  get recovers(): boolean {
    return this.core.sessions !== undefined && this.core.serviceEvents.history !== undefined
  }

  /** Offsets to hand to a connection (on login, after a recovery): it has seen every event up to there. */
  onOffset(listener: (connection: Connection, offset: string) => void): void {
    this.offsetListeners.push(listener)
  }

  /** The offset of the latest event: a new connection has seen everything up to it. */
  head(): string {
    return this.core.serviceEvents.history!.head()
  }

  /**
   * Keeps a new connection's session (its private id and public id) for recovery; call it before the client learns the
   * ids.
   */
  remember(connection: Connection, ids: { id: string; connectionId: string }): Promise<void> {
    return this.recovering().remember(connection, ids)
  }

  /** The session a client asks to resume, when it can be: not expired, its login still valid, nothing missed pruned. */
  restorable(id: string, offset: string, provider: string): Promise<Restorable | undefined> {
    return this.recovering().restorable(id, offset, provider)
  }

  /** Opens a recovered connection with its login, channels and missed events (handed to `onDelivery` listeners). */
  async restore(connection: Connection, restorable: Restorable): Promise<void> {
    this.connections.add(connection)
    await this.recovering().restore(connection, restorable)
  }

  /** The transport stopped: no more deliveries, timers or login tracking. */
  shutdown(): void {
    for (const stop of this.undeliver.splice(0)) stop()
    this.auth?.detach()
    this.auth = undefined
    this.recovery?.detach()
    this.recovery = undefined
  }

  private recovering(): ConnectionRecovery {
    const { sessions, serviceEvents } = this.core
    const history = serviceEvents.history
    if (!sessions || !history) throw new Error('This app keeps no event history: connections cannot be recovered')
    // Logins must be bound to connections before recovery restores one.
    this.authentication()
    this.recovery ??= new ConnectionRecovery({
      history,
      sessions,
      clock: this.clock,
      events: this.core.appEvents,
      verify: async (authentication, provider) =>
        (await this.call({ path: AUTHENTICATION_PATH, method: 'create', data: authentication, params: { provider } }))
          .result as LoginResult,
      open: (connection) => this.open(connection),
      missedBy: (connection, events) => serviceEvents.missedBy(connection, events),
      deliver: (delivery) => {
        for (const listener of this.listeners) listener(delivery)
      },
      seen: (connection, offset) => {
        for (const listener of this.offsetListeners) listener(connection, offset)
      }
    })
    return this.recovery
  }

  /**
   * Runs a call through the hooks, timed when metrics are on: by service, method (one the service
   * exposes, else `_OTHER`: a client can name any method), transport and outcome.
   */
  private measured(entry: ServiceEntry, call: ServiceCall, metrics: Metrics): Promise<HookContext> {
    const start = performance.now()
    const done = (outcome: string) => {
      const method = entry.methods.includes(call.method) ? call.method : '_OTHER'
      metrics.serviceCall(entry.path, method, String(call.params.provider), outcome, (performance.now() - start) / 1000)
    }
    return this.core.run(entry, call).then(
      (context) => {
        done('ok')
        return context
      },
      (error: unknown) => {
        done(errorOutcome(error))
        throw error
      }
    )
  }

  private authentication(): ConnectionAuthentication {
    this.auth ??= new ConnectionAuthentication(
      {
        events: this.core.appEvents,
        available: () => this.core.registry.get(AUTHENTICATION_PATH) !== undefined,
        call: async (connection, method, data) => {
          const id = method === 'remove' ? null : undefined
          return (
            await this.call({
              path: AUTHENTICATION_PATH,
              method,
              id,
              data: method === 'create' ? data : undefined,
              params: this.connectionParams(connection)
            })
          ).result
        },
        revocations: () => {
          const sessions = (
            this.core.registry.get(AUTHENTICATION_PATH)?.service as { sessions?: Partial<RevocationCheck> } | undefined
          )?.sessions
          return typeof sessions?.check === 'function' && typeof sessions.refresh === 'function'
            ? (sessions as RevocationCheck)
            : undefined
        }
      },
      (connection) => this.connections.has(connection),
      this.clock
    )
    return this.auth
  }
}
