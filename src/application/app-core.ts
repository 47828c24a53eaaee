import type { EventEmitter } from 'node:events'
import type { Metrics } from '../domain/metrics.js'
import type { ConnectionSessions } from '../domain/realtime/connection-sessions.js'
import type { ServiceCall } from '../domain/service/service.js'
import type { Tracer } from '../domain/tracing.js'
import type { HookContext } from './hook-context.js'
import type { HookPipeline } from './hook-pipeline.js'
import type { ServiceEntry } from './service-entry.js'
import type { ServiceEvents } from './service-events.js'
import type { ServiceRegistry } from './service-registry.js'

/**
 * The app as the parts it hands out see it: each service's handle (`app.service(path)`, see
 * service-handle.ts) and each transport's Gateway (`app.gateway()`) call back into it. The App builds
 * one and gives the same to all of them, so none of them imports the App: the application's files
 * import each other one way, with app.ts on top.
 */
export interface AppCore {
  /** The registered services, and how request paths resolve to them. */
  readonly registry: ServiceRegistry
  /** App and service hooks (`handle.hooks(map)` adds to it). */
  readonly pipeline: HookPipeline
  /** Service events, channels and publishing (`handle.emit`, `handle.publish`, a gateway's deliveries). */
  readonly serviceEvents: ServiceEvents
  /** The app's own events: `connection` and `disconnect` from gateways, `login` and `logout`. */
  readonly appEvents: EventEmitter
  /** Where transports' calls, connections and deliveries are counted. */
  readonly metrics: Metrics
  /** Spans of calls and publications; transports open their server spans with it. */
  readonly tracer: Tracer
  /** Sessions of lost connections, kept when the app recovers them (beside `serviceEvents.history`). */
  readonly sessions?: ConnectionSessions
  /**
   * One call through the hooks, then its events; traced when tracing is on. A call from a transport
   * (`params.provider` set) counts as in flight until it settles (`app.idle()` waits for those).
   */
  run(entry: ServiceEntry, call: ServiceCall): Promise<HookContext>
  /**
   * Counts work a transport started and nobody awaits (a lost connection's session being saved) as in flight until
   * it settles: `app.idle()` waits for it too, so a shutdown does not close the store under it.
   */
  track(work: Promise<unknown>): void
}
