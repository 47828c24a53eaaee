import type { EventEmitter } from 'node:events'
import type { Clock } from '../../domain/clock.js'
import { NotFound } from '../../domain/errors/errors.js'
import type { Connection, NullableId, Params, Query } from '../../domain/service/service.js'
import type { Tracer } from '../../domain/tracing.js'
import type { Delivery } from '../channel.js'
import type { HookContext } from '../hook-context.js'
import type { PipelineCall } from '../hook-pipeline.js'
import type { Resolved, ServiceEntry } from '../service-entry.js'
import { ConnectionAuthentication, type RevocationCheck } from './connection-authentication.js'

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

/** One call from outside: which service, which method, and its arguments by meaning. */
export interface ServiceCall {
  /** A registered path, e.g. `Target.path`. */
  path: string
  method: string
  id?: NullableId
  data?: unknown
  /** Must carry `provider` (the transport's name): external calls reach only the exposed methods. */
  params: Params
}

/** What a call answers: the result for the caller (a `protect`ed copy when hooks made one), and HTTP hints. */
export interface CallResult {
  result: unknown
  /** Set by a hook through `context.http.status`. */
  status?: number
  /** Set by a hook through `context.http.location`: answer with a redirect. */
  location?: string
}

/** What the app gives a gateway: its internals, reached through this interface only. */
export interface GatewayCore {
  readonly events: EventEmitter
  /** Decides when a connection's token has expired: the clock the token service checks `exp` with. */
  readonly clock: Clock
  /** The app's tracer: transports open the server span of each request or socket call with it. */
  readonly tracer: Tracer
  resolve(path: string, allowId: boolean): Resolved | undefined
  entry(path: string): ServiceEntry | undefined
  run(entry: ServiceEntry, call: PipelineCall): Promise<HookContext>
  onDelivery(listener: (delivery: Delivery) => void): () => void
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
  private auth?: ConnectionAuthentication

  constructor(private readonly core: GatewayCore) {}

  /** Where a transport opens the server span of a request or call (the app's tracer; `noTracer` when off). */
  get tracer(): Tracer {
    return this.core.tracer
  }

  /** The service for a request path; with `{ id: true }` a trailing segment may be the id (REST). */
  resolve(path: string, options: { id?: boolean } = {}): Target | undefined {
    const resolved = this.core.resolve(path, options.id ?? false)
    if (!resolved) return undefined
    const { entry, route, id } = resolved
    return { path: entry.path, methods: entry.methods, route, id }
  }

  /** Runs one call through the hooks; rejects with NotFound for an unknown path. */
  async call(call: ServiceCall): Promise<CallResult> {
    const entry = this.core.entry(call.path)
    if (!entry) throw new NotFound(`Service '${call.path}' not found`)
    const context = await this.core.run(entry, call)
    const { status, location } = context.http
    return { result: context.dispatch ?? context.result, status, location }
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
    this.core.events.emit('connection', connection)
  }

  /** A connection went away: it leaves every channel and its login is forgotten. */
  close(connection: Connection): void {
    this.connections.delete(connection)
    this.auth?.forget(connection)
    if (this.opened.has(connection)) {
      this.opened.delete(connection)
      this.core.events.emit('disconnect', connection)
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

  /** Published events for this transport's connections; other transports' connections are filtered out. */
  onDelivery(listener: (delivery: Delivery) => void): void {
    this.undeliver.push(this.core.onDelivery((delivery) => {
      if (delivery.connections.every((connection) => this.connections.has(connection))) return listener(delivery)
      const connections = delivery.connections.filter((connection) => this.connections.has(connection))
      if (connections.length > 0) listener({ ...delivery, connections })
    }))
  }

  /** The transport stopped: no more deliveries, timers or login tracking. */
  shutdown(): void {
    for (const stop of this.undeliver.splice(0)) stop()
    this.auth?.detach()
    this.auth = undefined
  }

  private authentication(): ConnectionAuthentication {
    this.auth ??= new ConnectionAuthentication({
      events: this.core.events,
      available: () => this.core.entry(AUTHENTICATION_PATH) !== undefined,
      call: async (connection, method, data) => {
        const id = method === 'remove' ? null : undefined
        return (await this.call({ path: AUTHENTICATION_PATH, method, id, data: method === 'create' ? data : undefined, params: this.connectionParams(connection) })).result
      },
      revocations: () => {
        const sessions = (this.core.entry(AUTHENTICATION_PATH)?.service as { sessions?: Partial<RevocationCheck> } | undefined)?.sessions
        return typeof sessions?.check === 'function' ? (sessions as RevocationCheck) : undefined
      }
    }, (connection) => this.connections.has(connection), this.core.clock)
    return this.auth
  }
}
