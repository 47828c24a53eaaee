import type { EventEmitter } from 'node:events'
import type { ServiceCall } from '../domain/service/service.js'
import type { Extensions } from './extensions.js'
import type { HookContext } from './hook-context.js'
import type { HookPipeline } from './hook-pipeline.js'
import type { ServiceEntry } from './service-entry.js'
import type { ServiceEvents } from './service-events.js'
import type { ServiceRegistry } from './service-registry.js'

/**
 * The app as the parts it hands out see it: each service's handle (`app.service(path)`, see
 * service-handle.ts) and each transport's Gateway (`new Gateway(app)`) call back into it. The App builds
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
  /** What modules plugged in (extensions.ts): around calls and publications, observers, a connection extension. */
  readonly extensions: Extensions
  /**
   * One call through the extensions around calls, the hooks, the method, then its events. A call from a
   * transport (`params.provider` set) counts as in flight until it settles (`app.idle()` waits for those).
   */
  run(entry: ServiceEntry, call: ServiceCall): Promise<HookContext>
  /**
   * Counts work a transport started and nobody awaits (a lost connection's session being saved) as in flight until
   * it settles: `app.idle()` waits for it too, so a shutdown does not close the store under it.
   */
  track(work: Promise<unknown>): void
}

const cores = new WeakMap<object, AppCore>()

/** The core of an app, for its transports' gateways (transport/gateway.ts). */
export function coreOf(app: object): AppCore {
  const core = cores.get(app)
  if (!core) throw new Error('Not a plumage App: a gateway needs the app its transport serves')
  return core
}

/** Called once by the App that built `core`. */
export function registerCore(app: object, core: AppCore): void {
  cores.set(app, core)
}
