import { Emitter } from './emitter.js'
import { WriteFence } from './fence/write-fence.js'
import { RemoteService } from './remote-service.js'
import type { Transport } from './transport.js'
import type { ServiceTypes, TypedService } from './typed-service.js'
import type { ServiceCall } from '../../domain/service/service.js'

/** What client hooks see: one object per call, the call itself plus the app and the result. */
export interface ClientHookContext extends ServiceCall {
  readonly app: ClientApp
  readonly path: string
  readonly method: string
  /** Set after `next()` resolves; a hook may set it before calling `next` to skip the request. */
  result?: unknown
}

export type ClientHook = (context: ClientHookContext, next: () => Promise<void>) => Promise<void>

/**
 * What `createClient<Services>()` takes: every path's ServiceTypes. Declared as a bound on `Services`
 * (rather than checked per path with a conditional type) so the compiler relates the map once, where the
 * client is created, instead of once per variance check and per `service(path)` call (BENCHMARKS.md
 * "Typed client").
 */
export type ServiceMap<Services> = { [P in keyof Services]: ServiceTypes }

/**
 * The browser-safe client application. Extension points, used by the REST, socket and
 * authentication clients:
 *
 * - `configure(fn)`: runs `fn(client)`; a transport plugin sets `client.transport` there.
 * - `transport`: the one `Transport` (transport.ts) every remote service calls through. Setting it
 *   (re)subscribes the events services already listen to when the transport is real-time.
 * - `hooks([...])`: app-level around hooks `(context, next)` wrapping every call in registration
 *   order, e.g. to wait for a pending login and add an `Authorization` header to `params.headers`.
 * - `on/once/off/emit`: app events ('login', 'logout', …) emitted by plugins.
 * - `set/get`: settings shared by plugins (e.g. the authentication client's storage).
 * - `service(path)`: cached `RemoteService`s (remote-service.ts); `.methods('name')` adds custom methods.
 * - `fence`: read your writes — a write to a service this client watches resolves once its views applied it.
 *
 * `Services` maps paths to their types (typed-service.ts): `service('messages')` of a
 * `createClient<Services>()` is then typed — data, query, results, events and custom methods — while
 * the object it answers is the same RemoteService. Paths not in the map stay untyped.
 */
export class ClientApp<Services extends ServiceMap<Services> = object> extends Emitter {
  private readonly services = new Map<string, RemoteService>()
  private readonly settings = new Map<string, unknown>()
  private readonly around: ClientHook[] = []
  private current?: Transport
  /** Read your writes (fence/write-fence.ts): on by default; `readYourWrites(...)` sets it up. */
  fence = new WriteFence()

  configure(plugin: (client: ClientApp) => void): this {
    plugin.call(this, this)
    return this
  }

  get transport(): Transport | undefined {
    return this.current
  }

  set transport(transport: Transport | undefined) {
    this.current = transport
    for (const service of this.services.values()) service.resubscribe()
  }

  service<P extends keyof Services & string>(path: P): TypedServiceAt<Services, P>
  service(path: string): RemoteService
  service(path: string): unknown {
    const name = path
      .split('/')
      .filter((segment) => segment.length > 0)
      .join('/')
    let service = this.services.get(name)
    if (!service) this.services.set(name, (service = new RemoteService(name, this)))
    return service
  }

  hooks(hooks: ClientHook[]): this {
    this.around.push(...hooks)
    return this
  }

  set(name: string, value: unknown): this {
    this.settings.set(name, value)
    return this
  }

  get(name: string): unknown {
    return this.settings.get(name)
  }

  /** Runs one call through the hooks and the transport; RemoteService methods end up here. */
  async request(context: ClientHookContext): Promise<unknown> {
    const run = async (index: number): Promise<void> => {
      if (index < this.around.length) return this.around[index]!(context, () => run(index + 1))
      if (context.result !== undefined) return
      const transport = this.current
      if (!transport) {
        throw new Error(
          `No transport is configured: call client.configure(rest(url).fetch(fetch)) or a socket transport before using '${context.path}'`
        )
      }
      const { path, method, id, data, params } = context
      context.result = await transport.call({ path, method, id, data, params })
    }
    await run(0)
    return context.result
  }
}

/** The typed view of the service at `P`. */
export type TypedServiceAt<Services extends ServiceMap<Services>, P extends keyof Services> = TypedService<Services[P]>

/**
 * Creates a client app; plug a transport in with `configure`. `createClient<Services>()` types its
 * services from a map of ServiceTypes (no code is generated: the types come from the schemas).
 */
export function createClient<Services extends ServiceMap<Services> = object>(): ClientApp<Services> {
  return new ClientApp<Services>()
}
