import type { StandardMethod } from '../domain/service/method-layout.js'
import type { NullableId, Params, Service } from '../domain/service/service.js'
import type { Publisher } from './channel.js'
import type { CompiledSchemas } from './schema/compile-schemas.js'

/*
 * What hooks see and reach: the call's context, the app as hooks may use it, and the handle of a
 * service (what `app.service(path)` returns, and `context.service`). They refer to each other, so they
 * live in one file that imports nothing of the application above it.
 */

export type HookType = 'around' | 'before' | 'after' | 'error'

/**
 * The app as hooks may use it: other services (e.g. `authenticate` asks the authentication service)
 * and the schemas services were registered with. The App implements it; registering services, hooks,
 * channels and transports stays with whoever holds the App itself.
 */
export interface HookApp {
  /** The registered paths. */
  readonly paths: string[]
  /** The service at `path`, whose methods run through the hooks; throws for an unknown path. */
  service<S = Service>(path: string): ServiceHandle<S>
  /** The compiled schemas a service was registered with; undefined when it has none. */
  schemasOf(path: string): CompiledSchemas | undefined
}

/** What every hook sees; one object per call, shared by all its hooks. */
export interface HookContext<T = unknown> {
  readonly app: HookApp
  readonly service: ServiceHandle
  readonly path: string
  readonly method: string
  type: HookType
  id?: NullableId
  data?: unknown
  params: Params
  /** Set by the method, or by a before hook to skip the method. */
  result?: T
  /** What external callers receive instead of `result` (set by `protect`). */
  dispatch?: unknown
  error?: unknown
  /** The service event this call emits; a hook may set it to null to emit nothing. */
  event: string | null
  /**
   * REST only: `status` overrides the status code, `location` answers 303 with that Location. `offset`: the event
   * offset of a write that asked for it, once its events were emitted (read your writes; never rejects).
   */
  http: { status?: number; location?: string; offset?: () => Promise<string | undefined> }
}

export type Hook = (context: HookContext) => unknown
export type AroundHook = (context: HookContext, next: () => Promise<void>) => Promise<void>

type ByMethod<H> = Partial<Record<string, H[]>>

/** Feathers' registration shape: `{ before: { all: [...], create: [...] }, after, error, around }`. */
export interface HookMap {
  around?: ByMethod<AroundHook>
  before?: ByMethod<Hook>
  after?: ByMethod<Hook>
  error?: ByMethod<Hook>
}

export type EventListener = (data: unknown, context?: HookContext) => void

/** What every handle adds to its service: identity, hooks, events and publishers. */
export interface HandleMembers {
  readonly path: string
  /** The methods external callers (transports) may use. */
  readonly methods: readonly string[]
  hooks(map: HookMap | AroundHook[]): this
  on(event: string, listener: EventListener): this
  once(event: string, listener: EventListener): this
  off(event: string, listener: EventListener): this
  emit(event: string, data: unknown, context?: HookContext): boolean
  publish(eventOrPublisher: string | Publisher, publisher?: Publisher): this
}

/** The standard methods a service type declares, required (a handle has exactly those). */
type StandardMethodsOf<S> = { [K in Extract<keyof S, StandardMethod>]-?: NonNullable<S[K]> }

/**
 * What `app.service(path)` returns for a service of type `S`: the registered service (its own
 * members stay reachable through the prototype, e.g. `createQuery`) whose standard and custom
 * methods run through the hooks, plus events and publishers. Without a known type, `S` is a
 * service with all six standard methods.
 */
export type ServiceHandle<S = Service> = Omit<S, keyof HandleMembers | StandardMethod | 'setup' | 'teardown'> &
  StandardMethodsOf<S> &
  HandleMembers

/** A service's custom method, as the app calls it: `(data, params)`. */
export type CustomMethod = (data: unknown, params?: Params) => Promise<unknown>
