import { EventEmitter } from 'node:events'
import type { SchemaValidator } from '../domain/schema/schema-validator.js'
import type { Connection, Service, ServiceCall } from '../domain/service/service.js'
import { registerCore, type AppCore } from './app-core.js'
import type { Channel, Publisher } from './channel.js'
import { Extensions, type AppExtension } from './extensions.js'
import type { AroundHook, HookApp, HookContext, HookMap, ServiceHandle } from './hook-context.js'
import { HookPipeline } from './hook-pipeline.js'
import { compileSchemas, type CompiledSchemas } from './schema/compile-schemas.js'
import type { AppOptions, ServiceDescription, ServiceEntry, ServiceOptions } from './service-entry.js'
import { ServiceEvents } from './service-events.js'
import { decorateHandle } from './service-handle.js'
import { ServiceRegistry } from './service-registry.js'

export type { AppExtension, AppOptions, ServiceDescription, ServiceOptions }

/**
 * The application: register services with `use`, reach them with `service`, add app-wide hooks,
 * group real-time connections in channels and choose what they receive with `publish`.
 * Transports reach it only through a Gateway (`new Gateway(app)`, transport/gateway.ts). Optional modules
 * (metrics, tracing, connection recovery…) plug in with `extend` (extensions.ts) instead of options.
 *
 * `Services` maps paths to service types, so that `app.service('messages')` is typed:
 * `new App<{ messages: AdapterService<Message> }>()`. Unknown paths give a service with all six methods.
 *
 * App events: `connection` and `disconnect` (from transports), `login` and `logout` (from authentication).
 *
 * Its parts — the registry, the hook pipeline, the service events — are put together here once, as
 * the AppCore (app-core.ts) that service handles and transports' gateways call back into. Hooks see
 * the app as a HookApp (`context.app`).
 */
export class App<Services extends object = object> extends EventEmitter implements HookApp {
  readonly settings = new Map<string, unknown>()
  readonly validator?: SchemaValidator
  private readonly core: AppCore
  private readonly extensions = new Extensions()
  private readonly registry: ServiceRegistry
  private readonly pipeline: HookPipeline
  private readonly events: ServiceEvents
  /**
   * How many calls that came in through a transport have not finished (see `idle`): a count, not a
   * set of their promises, so a call pays no extra promise and closures for being tracked.
   */
  private inFlight = 0
  /** Resolvers of `idle()` waits, called when `inFlight` drops to 0. */
  private readonly drained = new Set<() => void>()
  private isSetup = false

  constructor(options: AppOptions = {}) {
    super()
    this.validator = options.validator
    const registry = (this.registry = new ServiceRegistry())
    this.pipeline = new HookPipeline(this, () => registry.values())
    this.events = new ServiceEvents({
      extensions: this.extensions,
      app: this,
      entry: (path) => registry.get(path),
      resolvers: (entry) => this.pipeline.eventResolvers(entry),
      // An event that could not be resolved or staged was not delivered: the app's `error` listeners hear of it.
      failed: (error, event) => void (this.listenerCount('error') > 0 && this.emit('error', error, event))
    })
    this.core = {
      registry,
      pipeline: this.pipeline,
      serviceEvents: this.events,
      appEvents: this,
      extensions: this.extensions,
      run: (entry, call) => this.run(entry, call),
      track: (work) => {
        this.inFlight++
        work.then(this.counted, this.counted)
      }
    }
    registerCore(this, this.core)
    for (const extension of options.extensions ?? []) this.extend(extension)
    this.setMaxListeners(0)
    this.on('disconnect', (connection: Connection) => this.events.leaveAll(connection))
  }

  /** Registers a service at `path` (`users/:userId/posts` fills `params.route.userId`). */
  use(path: string, service: object, options: ServiceOptions = {}): this {
    const schemas = options.schemas ? compileSchemas(options.schemas, this.validator) : undefined
    const entry = this.registry.register(path, service, options, schemas)
    decorateHandle(entry, this.core)
    if (this.isSetup) void this.setupEntry(entry)
    return this
  }

  /** The service at `path`, whose methods run through the hooks. */
  service<P extends keyof Services & string>(path: P): ServiceHandle<Services[P]>
  service<S = Service>(path: string): ServiceHandle<S>
  service(path: string): ServiceHandle<unknown> {
    const entry = this.registry.get(path)
    if (!entry) throw new Error(`No service is registered at '${path.split('/').filter(Boolean).join('/')}'`)
    return entry.handle as ServiceHandle<unknown>
  }

  get paths(): string[] {
    return this.registry.paths
  }

  /** The compiled schemas a service was registered with; undefined when it has none. */
  schemasOf(path: string): CompiledSchemas | undefined {
    return this.registry.get(path)?.schemas
  }

  /** Every registered service with its methods, events, schemas and hooks. */
  describe(): ServiceDescription[] {
    return [...this.registry.values()].map((entry) => ({
      path: entry.path,
      service: entry.service,
      methods: entry.methods,
      events: [...entry.events],
      ...(entry.schemas ? { schemas: entry.schemas.schemas } : {}),
      hooks: (method: string) => this.pipeline.chainFor(entry, method)
    }))
  }

  /**
   * Plugs in an optional module's extension (extensions.ts): around every call and publication, observers
   * of deliveries and connections, a record of events, a connection extension. Add them before transports start.
   */
  extend(extension: AppExtension): this {
    this.extensions.add(extension)
    return this
  }

  /** App-level hooks; they wrap every service's hooks. */
  hooks(map: HookMap | AroundHook[]): this {
    this.pipeline.addAppHooks(map)
    return this
  }

  /**
   * Calls every service's `setup`, then the setup steps its hooks carry (e.g. uniqueField's back-fill), and waits
   * until live stores publish their changes.
   */
  async setup(): Promise<void> {
    this.isSetup = true
    for (const entry of this.registry.values()) await this.setupEntry(entry)
  }

  /**
   * Stops every service (its `teardown`, its store's feed), then the extensions (with recovery, this instance's
   * heartbeat for the connection sessions it holds): call it after `idle()`, once the dropped connections were saved.
   */
  async teardown(): Promise<void> {
    this.isSetup = false
    for (const entry of this.registry.values()) {
      entry.unwatch?.()
      entry.unwatch = undefined
      await (entry.service as { teardown?: (app: App, path: string) => unknown }).teardown?.(this as App, entry.path)
    }
    await this.extensions.teardown()
  }

  /**
   * Resolves once no call that came in through a transport is running any more, or after
   * `timeoutMs`. A graceful shutdown waits here after its transports stopped taking calls and before
   * the store closes: a socket call in flight (its client is gone, its work is not) then ends as it
   * would have, instead of every query it had running failing at once when the pool is drained.
   */
  async idle(timeoutMs = 10_000): Promise<void> {
    if (this.inFlight === 0) return
    let resolve!: () => void
    const drained = new Promise<void>((done) => (resolve = done))
    const timer = setTimeout(resolve, timeoutMs)
    this.drained.add(resolve)
    await drained
    clearTimeout(timer)
    this.drained.delete(resolve)
  }

  /** A named channel (created on first use), or several as one. */
  channel(...names: (string | string[])[]): Channel {
    return this.events.channel(names.flat())
  }

  get channels(): string[] {
    return this.events.channelNames
  }

  /** Chooses the channels an event (or every event) is published to, for every service. */
  publish(eventOrPublisher: string | Publisher, publisher?: Publisher): this {
    this.events.publish(eventOrPublisher, publisher)
    return this
  }

  /**
   * One call (AppCore.run): inside the extensions around calls, its hooks and method, then its events (emitted
   * while the call is still the active unit of work, so a tracing extension links them to it). A call from a
   * transport is counted in flight until it settles.
   */
  private run(entry: ServiceEntry, call: ServiceCall): Promise<HookContext> {
    const around = this.extensions.aroundCall
    const running = around
      ? around(
          {
            path: entry.path,
            method: call.method,
            exposed: entry.methods.includes(call.method),
            provider: call.params.provider
          },
          () => this.execute(entry, call)
        )
      : this.execute(entry, call)
    if (call.params.provider === undefined) return running
    this.inFlight++
    return running.then(this.finished, this.failed)
  }

  private execute(entry: ServiceEntry, call: ServiceCall): Promise<HookContext> {
    return this.pipeline.run(entry, call).then((context) => {
      this.events.emitResult(entry, context)
      return context
    })
  }

  // Bound once: tracking a call in flight allocates nothing per call but the promise of `then`.
  private readonly finished = (context: HookContext): HookContext => {
    this.settled()
    return context
  }

  private readonly failed = (error: unknown): never => {
    this.settled()
    throw error
  }

  // Tracked work, settled either way (a failure is its owner's to report): only counted out.
  private readonly counted = (): void => this.settled()

  private settled(): void {
    if (--this.inFlight === 0 && this.drained.size > 0) for (const resolve of this.drained) resolve()
  }

  private async setupEntry(entry: ServiceEntry): Promise<void> {
    await (entry.service as { setup?: (app: App, path: string) => unknown }).setup?.(this as App, entry.path)
    for (const step of this.pipeline.setupSteps(entry)) await step({ path: entry.path, service: entry.service })
    // Ready means every write from now on is published: wait until the change stream is live.
    await this.events.follow(entry, () => this.pipeline.hiddenFields(entry))
  }
}
