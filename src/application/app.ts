import { EventEmitter } from 'node:events'
import { BadRequest, MethodNotAllowed } from '../domain/errors/errors.js'
import {
  METHOD_EVENTS, RESERVED_METHODS, STANDARD_METHODS,
  type Connection, type Id, type NullableId, type Params, type ServiceMethods
} from '../domain/service/service.js'
import { MAX_NESTING_DEPTH, nestedDeeperThan } from '../domain/service/nesting-depth.js'
import type { SchemaValidator } from '../domain/schema/schema-validator.js'
import { Channel, CombinedChannel, type Delivery, type Publisher } from './channel.js'
import type { AroundHook, HookContext, HookMap } from './hook-context.js'
import { HookRegistry, combineChains, type HookChain } from './hook-registry.js'
import { PROTECTED_FIELDS, withoutFields } from './protected-fields.js'
import { compileSchemas, type CompiledSchemas } from './schema/compile-schemas.js'
import type { AppOptions, LiveService, Lookup, ServiceDescription, ServiceEntry, ServiceOptions } from './service-entry.js'
import type { CustomMethod, EventListener, ServiceHandle } from './service-handle.js'

export type { AppOptions, Lookup, ServiceDescription, ServiceEntry, ServiceOptions }

type AnyFunction = (...args: unknown[]) => unknown

/**
 * The application: service registry, hook pipeline, service events and channels.
 * App-level events: 'connection', 'disconnect', 'login', 'logout' (emitted by transports/auth).
 */
export class App extends EventEmitter {
  readonly settings = new Map<string, unknown>()
  private readonly entries = new Map<string, ServiceEntry>()
  private readonly routed: ServiceEntry[] = []
  private readonly appHooks = new HookRegistry()
  private readonly appProtected = new Set<string>()
  private readonly namedChannels = new Map<string, Channel>()
  private readonly publishers = new Map<string, Publisher>()
  private readonly deliveryListeners: ((delivery: Delivery) => void)[] = []
  private isSetup = false
  readonly validator?: SchemaValidator

  constructor(options: AppOptions = {}) {
    super()
    this.validator = options.validator
    this.setMaxListeners(0)
    this.on('disconnect', (connection: Connection) => this.leaveAllChannels(connection))
  }

  use(path: string, service: object, options: ServiceOptions = {}): this {
    const name = normalisePath(path)
    if (this.entries.has(name)) throw new Error(`A service is already registered at '${name}'`)
    const has = (method: string) => typeof (service as Record<string, unknown>)[method] === 'function'
    const methods = options.methods ?? STANDARD_METHODS.filter(has)
    for (const method of methods) {
      if (RESERVED_METHODS.has(method)) throw new Error(`'${method}' is reserved and cannot be a service method`)
      if (!has(method)) throw new Error(`Method '${method}' is listed for '${name}' but the service does not implement it`)
    }
    const segments = name.split('/')
    if (segments.some((segment) => segment === ':__id' || segment === ':__feathersId')) throw new Error('Reserved route placeholder')
    const declared = (service as { events?: unknown }).events
    const entry: ServiceEntry = {
      path: name,
      service,
      handle: Object.create(service) as ServiceHandle,
      methods,
      events: new Set([...Object.values(METHOD_EVENTS) as string[], ...(options.events ?? []), ...(Array.isArray(declared) ? declared : [])]),
      hooks: new HookRegistry(),
      chains: new Map(),
      emitter: new EventEmitter().setMaxListeners(0),
      publishers: new Map(),
      protectedFields: new Set(),
      route: segments.some((segment) => segment.startsWith(':')) ? segments : undefined,
      live: typeof (service as Partial<LiveService>).watch === 'function',
      ...(options.schemas ? { schemas: compileSchemas(options.schemas, this.validator) } : {})
    }
    this.decorate(entry, new Set([...STANDARD_METHODS.filter(has), ...methods]))
    this.entries.set(name, entry)
    if (entry.route) this.routed.push(entry)
    if (this.isSetup) void this.setupEntry(entry)
    return this
  }

  service<S = ServiceMethods>(path: string): ServiceHandle & S {
    const entry = this.entries.get(normalisePath(path))
    if (!entry) throw new Error(`No service is registered at '${normalisePath(path)}'`)
    return entry.handle as ServiceHandle & S
  }

  get paths(): string[] {
    return [...this.entries.keys()]
  }

  /** The compiled schemas a service was registered with; undefined when it has none. */
  schemasOf(path: string): CompiledSchemas | undefined {
    return this.entries.get(normalisePath(path))?.schemas
  }

  /** Every registered service with its methods, events, schemas and hooks. */
  describe(): ServiceDescription[] {
    return [...this.entries.values()].map((entry) => ({
      path: entry.path,
      service: entry.service,
      methods: entry.methods,
      events: [...entry.events],
      ...(entry.schemas ? { schemas: entry.schemas.schemas } : {}),
      hooks: (method: string) => this.chainFor(entry, method)
    }))
  }

  /** App-level hooks; they wrap every service's hooks. */
  hooks(map: HookMap | AroundHook[]): this {
    this.appHooks.add(map)
    collectProtected(map, this.appProtected)
    for (const entry of this.entries.values()) entry.chains.clear()
    return this
  }

  async setup(): Promise<void> {
    this.isSetup = true
    for (const entry of this.entries.values()) await this.setupEntry(entry)
  }

  async teardown(): Promise<void> {
    this.isSetup = false
    for (const entry of this.entries.values()) {
      entry.unwatch?.()
      entry.unwatch = undefined
      await (entry.service as ServiceMethods).teardown?.(this, entry.path)
    }
  }

  /** Finds the service for a path (REST: with an optional trailing id segment; sockets: exact). */
  lookup(path: string, allowId = true): Lookup | undefined {
    const segments = path.split('/').filter((segment) => segment.length > 0)
    const exact = this.entries.get(segments.join('/'))
    if (exact && !exact.route) return { entry: exact, route: {} }
    if (allowId && segments.length > 1) {
      const parent = this.entries.get(segments.slice(0, -1).join('/'))
      if (parent && !parent.route) return { entry: parent, route: {}, id: segments[segments.length - 1] }
    }
    for (const entry of this.routed) {
      const pattern = entry.route!
      const extra = segments.length - pattern.length
      if (extra < 0 || extra > (allowId ? 1 : 0)) continue
      const route: Record<string, string> = {}
      if (pattern.every((part, index) => part.startsWith(':') ? ((route[part.slice(1)] = segments[index]!), true) : part === segments[index])) {
        return { entry, route, id: extra === 1 ? segments[segments.length - 1] : undefined }
      }
    }
    return undefined
  }

  /**
   * Runs one call through the pipeline and returns its context: around → before → method
   * (skipped when a before hook set `result`) → after; error hooks on failure; then events.
   */
  async execute(entry: ServiceEntry, method: string, id: NullableId | undefined, data: unknown, params: Params): Promise<HookContext> {
    if (params.provider !== undefined && !entry.methods.includes(method)) {
      throw new MethodNotAllowed(`Method \`${method}\` is not supported by this endpoint.`)
    }
    validateData(method, data)
    // Before any hook: hooks walk queries recursively too (e.g. forbidQueryOn).
    if (nestedDeeperThan(params.query)) throw new BadRequest(`The query may be nested at most ${MAX_NESTING_DEPTH} levels deep`)
    const context: HookContext = {
      app: this, service: entry.handle, path: entry.path, method, type: 'before',
      id, data, params, event: METHOD_EVENTS[method] ?? null, http: {}
    }
    const chain = this.chainFor(entry, method)
    if (chain.around.length === 0) await this.runHooksAndMethod(entry, chain, context)
    else await runAround(chain.around, 0, context, () => this.runHooksAndMethod(entry, chain, context))
    if (context.event !== null && !entry.live) this.emitResult(entry, context)
    return context
  }

  private chainFor(entry: ServiceEntry, method: string): HookChain {
    let chain = entry.chains.get(method)
    if (!chain) entry.chains.set(method, (chain = combineChains(this.appHooks.forMethod(method), entry.hooks.forMethod(method))))
    return chain
  }

  /** Emits a service event locally and publishes it to the channels its publisher picks. */
  emitServiceEvent(entry: ServiceEntry, event: string, data: unknown, context?: HookContext): void {
    entry.emitter.emit(event, data, context)
    if (this.deliveryListeners.length === 0 || !entry.events.has(event)) return
    const publisher = entry.publishers.get(event) ?? entry.publishers.get('*') ?? this.publishers.get(event) ?? this.publishers.get('*')
    if (!publisher) return
    const chosen = publisher(data, context)
    const channels = chosen ? (Array.isArray(chosen) ? chosen : [chosen]) : []
    const seen = new Set<Connection>()
    const groups = new Map<unknown, Connection[]>()
    for (const channel of channels) {
      const payload = channel.data ?? data
      for (const connection of channel.connections) {
        if (seen.has(connection)) continue
        seen.add(connection)
        const group = groups.get(payload)
        if (group) group.push(connection)
        else groups.set(payload, [connection])
      }
    }
    for (const [payload, connections] of groups) {
      const delivery: Delivery = { path: entry.path, event, data: payload, connections }
      for (const listener of this.deliveryListeners) listener(delivery)
    }
  }

  /** Transports subscribe here to send published events to their connections. */
  onDelivery(listener: (delivery: Delivery) => void): () => void {
    this.deliveryListeners.push(listener)
    return () => this.deliveryListeners.splice(this.deliveryListeners.indexOf(listener), 1)
  }

  channel(...names: (string | string[])[]): Channel {
    const list = names.flat()
    if (list.length === 1) {
      let channel = this.namedChannels.get(list[0]!)
      if (!channel) this.namedChannels.set(list[0]!, (channel = new Channel()))
      return channel
    }
    return new CombinedChannel(list.map((name) => this.channel(name)))
  }

  get channels(): string[] {
    return [...this.namedChannels.keys()]
  }

  publish(eventOrPublisher: string | Publisher, publisher?: Publisher): this {
    setPublisher(this.publishers, eventOrPublisher, publisher)
    return this
  }

  private leaveAllChannels(connection: Connection): void {
    for (const channel of this.namedChannels.values()) channel.leave(connection)
  }

  private async setupEntry(entry: ServiceEntry): Promise<void> {
    await (entry.service as ServiceMethods).setup?.(this, entry.path)
    if (entry.live && !entry.unwatch) {
      entry.unwatch = (entry.service as LiveService).watch(({ event, record }) => {
        const hidden = new Set([...this.appProtected, ...entry.protectedFields])
        this.emitServiceEvent(entry, event, hidden.size > 0 ? withoutFields(record, hidden) : record)
      })
      // Ready means every write from now on is published: wait until the change stream is live.
      await (entry.service as LiveService).whenWatching?.()
    }
  }

  private async runHooksAndMethod(entry: ServiceEntry, chain: HookChain, context: HookContext): Promise<void> {
    try {
      for (const hook of chain.before) {
        context.type = 'before'
        await hook(context)
      }
      if (context.result === undefined) context.result = await callMethod(entry, context)
      for (const hook of chain.after) {
        context.type = 'after'
        await hook(context)
      }
    } catch (error) {
      context.error = error
      const before = context.result
      for (const hook of chain.error) {
        context.type = 'error'
        try {
          await hook(context)
        } catch (replaced) {
          context.error = replaced
        }
      }
      const recovered = context.result !== before || context.error === undefined
      if (!recovered) throw context.error
      context.error = undefined
    }
  }

  private emitResult(entry: ServiceEntry, context: HookContext): void {
    const payload = context.dispatch ?? context.result
    if (payload === undefined || payload === null) return
    if (Array.isArray(payload)) for (const item of payload) this.emitServiceEvent(entry, context.event!, item, context)
    else this.emitServiceEvent(entry, context.event!, payload, context)
  }

  /** Gives the handle its hook-running methods, events and publishers. */
  private decorate(entry: ServiceEntry, methods: Set<string>): void {
    const handle = entry.handle as unknown as Record<string, unknown>
    const run = async (method: string, id: NullableId | undefined, data: unknown, params: Params = {}) =>
      (await this.execute(entry, method, id, data, params)).result
    for (const method of methods) {
      switch (method) {
        case 'find': handle.find = (params?: Params) => run(method, undefined, undefined, params); break
        case 'get': case 'remove': handle[method] = (id: NullableId, params?: Params) => run(method, id, undefined, params); break
        case 'update': case 'patch': handle[method] = (id: NullableId, data: unknown, params?: Params) => run(method, id, data, params); break
        default: handle[method] = ((data: unknown, params?: Params) => run(method, undefined, data, params)) satisfies CustomMethod
      }
    }
    const emitter = entry.emitter
    Object.assign(handle, {
      path: entry.path,
      methods: entry.methods,
      hooks: (map: HookMap | AroundHook[]) => {
        entry.hooks.add(map)
        collectProtected(map, entry.protectedFields)
        entry.chains.clear()
        return handle
      },
      on: (event: string, listener: EventListener) => (emitter.on(event, listener), handle),
      once: (event: string, listener: EventListener) => (emitter.once(event, listener), handle),
      off: (event: string, listener: EventListener) => (emitter.off(event, listener), handle),
      emit: (event: string, data: unknown, context?: HookContext) => {
        const live = entry.live ? (entry.service as LiveService) : undefined
        // A live store carries custom events to every process, this one included (the store logs failures).
        if (live?.publish) void live.publish(event, data).catch(() => undefined)
        else this.emitServiceEvent(entry, event, data, context)
        return true
      },
      publish: (eventOrPublisher: string | Publisher, publisher?: Publisher) => {
        setPublisher(entry.publishers, eventOrPublisher, publisher)
        return handle
      }
    })
  }
}

function callMethod(entry: ServiceEntry, context: HookContext): Promise<unknown> {
  const method = (entry.service as Record<string, AnyFunction>)[context.method]!
  const { id, data, params } = context
  switch (context.method) {
    case 'find': return method.call(entry.handle, params) as Promise<unknown>
    case 'get': case 'remove': return method.call(entry.handle, id as Id, params) as Promise<unknown>
    case 'update': case 'patch': return method.call(entry.handle, id, data, params) as Promise<unknown>
    default: return method.call(entry.handle, data, params) as Promise<unknown>
  }
}

function runAround(hooks: AroundHook[], index: number, context: HookContext, inner: () => Promise<void>): Promise<void> {
  if (index === hooks.length) return inner()
  context.type = 'around'
  return hooks[index]!(context, () => runAround(hooks, index + 1, context, inner))
}

/** Malformed data is a 400 before any hook or method runs (docs/wire-protocol.md, Service calls). */
function validateData(method: string, data: unknown): void {
  if (nestedDeeperThan(data)) throw new BadRequest(`Data may be nested at most ${MAX_NESTING_DEPTH} levels deep`)
  if (method === 'create' && (typeof data !== 'object' || data === null)) {
    throw new BadRequest("First parameter for 'create' must be an object")
  }
  if ((method === 'update' || method === 'patch') && (typeof data !== 'object' || data === null || Array.isArray(data))) {
    throw new BadRequest('No data provided')
  }
}

function setPublisher(target: Map<string, Publisher>, eventOrPublisher: string | Publisher, publisher?: Publisher): void {
  if (typeof eventOrPublisher === 'function') target.set('*', eventOrPublisher)
  else if (publisher) target.set(eventOrPublisher, publisher)
}

function collectProtected(map: HookMap | AroundHook[], into: Set<string>): void {
  const groups = Array.isArray(map) ? [map] : Object.values(map).flatMap((byMethod) => Object.values(byMethod ?? {}))
  for (const hooks of groups) {
    for (const hook of [hooks].flat()) {
      const fields = (hook as { [PROTECTED_FIELDS]?: string[] } | undefined)?.[PROTECTED_FIELDS]
      if (fields) for (const field of fields) into.add(field)
    }
  }
}

function normalisePath(path: string): string {
  return path.split('/').filter((segment) => segment.length > 0).join('/')
}

