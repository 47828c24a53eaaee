import type { StandardMethod } from '../domain/service/method-layout.js'
import type { Params, Service } from '../domain/service/service.js'
import type { Publisher } from './channel.js'
import type { AroundHook, HookContext, HookMap } from './hook-context.js'

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
