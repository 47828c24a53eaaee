import { EventEmitter } from 'node:events'
import type { Clock } from '../domain/clock.js'
import { noMetrics, type Metrics } from '../domain/metrics.js'
import type { SchemaValidator } from '../domain/schema/schema-validator.js'
import type { Connection, Service, ServiceCall } from '../domain/service/service.js'
import { isServerError, noTracer, type Tracer } from '../domain/tracing.js'
import type { Channel, Publisher } from './channel.js'
import type { AroundHook, HookContext, HookMap } from './hook-context.js'
import { HookPipeline } from './hook-pipeline.js'
import { compileSchemas, type CompiledSchemas } from './schema/compile-schemas.js'
import type { AppOptions, ServiceDescription, ServiceEntry, ServiceOptions } from './service-entry.js'
import { ServiceEvents } from './service-events.js'
import type { ServiceHandle } from './service-handle.js'
import { ServiceRegistry } from './service-registry.js'
import { Gateway } from './transport/gateway.js'

export type { AppOptions, ServiceDescription, ServiceOptions }

const systemClock: Clock = { now: () => Date.now() }

/**
 * The application: register services with `use`, reach them with `service`, add app-wide hooks,
 * group real-time connections in channels and choose what they receive with `publish`.
 * Transports reach it only through a Gateway (`app.gateway()`).
 *
 * `Services` maps paths to service types, so that `app.service('messages')` is typed:
 * `new App<{ messages: AdapterService<Message> }>()`. Unknown paths give a service with all six methods.
 *
 * App events: `connection` and `disconnect` (from transports), `login` and `logout` (from authentication).
 */
export class App<Services extends object = object> extends EventEmitter {
  readonly settings = new Map<string, unknown>()
  readonly validator?: SchemaValidator
  /** Spans of service calls and event publications; transports reach it through their Gateway. */
  readonly tracer: Tracer
  private readonly registry = new ServiceRegistry()
  private readonly pipeline: HookPipeline
  private readonly metrics: Metrics
  private readonly events: ServiceEvents
  private readonly recovery: AppOptions['recovery']
  /** Calls that came in through a transport and have not finished (see `idle`). */
  private readonly inFlight = new Set<Promise<unknown>>()
  private isSetup = false

  constructor(options: AppOptions = {}) {
    super()
    this.validator = options.validator
    this.metrics = options.metrics ?? noMetrics
    this.recovery = options.recovery
    this.tracer = options.tracer ?? noTracer
    this.events = new ServiceEvents({
      history: options.recovery?.history,
      metrics: this.metrics,
      tracer: this.tracer,
      app: this,
      entry: (path) => this.registry.get(path)
    })
    this.pipeline = new HookPipeline(this as App, () => this.registry.values())
    this.setMaxListeners(0)
    this.on('disconnect', (connection: Connection) => this.events.leaveAll(connection))
  }

  /** Registers a service at `path` (`users/:userId/posts` fills `params.route.userId`). */
  use(path: string, service: object, options: ServiceOptions = {}): this {
    const schemas = options.schemas ? compileSchemas(options.schemas, this.validator) : undefined
    const entry = this.registry.register(path, service, options, schemas, {
      run: async (target, method, id, data, params) =>
        (await this.run(target, { path: target.path, method, id, data, params })).result,
      hooks: (target, map) => this.pipeline.addServiceHooks(target, map),
      emit: (target, event, data, context) => this.events.emitCustom(target, event, data, context),
      publish: (target, eventOrPublisher, publisher) => this.events.publishOn(target, eventOrPublisher, publisher)
    })
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

  /** App-level hooks; they wrap every service's hooks. */
  hooks(map: HookMap | AroundHook[]): this {
    this.pipeline.addAppHooks(map)
    return this
  }

  /** Calls every service's `setup` and waits until live stores publish their changes. */
  async setup(): Promise<void> {
    this.isSetup = true
    for (const entry of this.registry.values()) await this.setupEntry(entry)
  }

  async teardown(): Promise<void> {
    this.isSetup = false
    for (const entry of this.registry.values()) {
      entry.unwatch?.()
      entry.unwatch = undefined
      await (entry.service as { teardown?: (app: App, path: string) => unknown }).teardown?.(this as App, entry.path)
    }
  }

  /**
   * Resolves once no call that came in through a transport is running any more, or after
   * `timeoutMs`. A graceful shutdown waits here after its transports stopped taking calls and before
   * the store closes: a socket call in flight (its client is gone, its work is not) then ends as it
   * would have, instead of every query it had running failing at once when the pool is drained.
   */
  async idle(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (this.inFlight.size > 0 && Date.now() < deadline) {
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, deadline - Date.now())
      })
      await Promise.race([Promise.allSettled([...this.inFlight]), late])
      clearTimeout(timer)
    }
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
   * The seam for one driving adapter (see transport/gateway.ts): it calls services, reports its
   * connections and receives the events published to them. `clock` decides when a connection's
   * token expires (pass the token service's clock).
   */
  gateway(options: { clock?: Clock } = {}): Gateway {
    return new Gateway({
      events: this,
      clock: options.clock ?? systemClock,
      metrics: this.metrics,
      tracer: this.tracer,
      resolve: (path, allowId) => this.registry.resolve(path, allowId),
      entry: (path) => this.registry.get(path),
      run: (entry, call) => this.track(this.run(entry, call)),
      onDelivery: (listener) => this.events.onDelivery(listener),
      ...(this.recovery
        ? { recovery: { ...this.recovery, missedBy: (connection, events) => this.events.missedBy(connection, events) } }
        : {})
    })
  }

  private track<T>(call: Promise<T>): Promise<T> {
    this.inFlight.add(call)
    const done = () => {
      this.inFlight.delete(call)
    }
    call.then(done, done)
    return call
  }

  /**
   * One call through the hooks, then its events. Traced, the call is the span `<path>.<method>`
   * (its store queries and the calls its hooks make are children), and its events link to it.
   */
  private async run(entry: ServiceEntry, call: ServiceCall): Promise<HookContext> {
    if (!this.tracer.enabled) {
      const context = await this.pipeline.run(entry, call)
      this.events.emitResult(entry, context)
      return context
    }
    let writer: string | undefined
    const context = await this.tracer.run(
      `${entry.path}.${call.method}`,
      {
        attributes: {
          'plumage.service': entry.path,
          'plumage.method': call.method,
          'plumage.provider': call.params.provider ?? 'internal'
        },
        isError: isServerError
      },
      () => {
        writer = this.tracer.traceparent()
        return this.pipeline.run(entry, call)
      }
    )
    this.events.emitResult(entry, context, writer)
    return context
  }

  private async setupEntry(entry: ServiceEntry): Promise<void> {
    await (entry.service as { setup?: (app: App, path: string) => unknown }).setup?.(this as App, entry.path)
    // Ready means every write from now on is published: wait until the change stream is live.
    await this.events.follow(entry, () => this.pipeline.hiddenFields(entry))
  }
}
