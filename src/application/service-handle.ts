import type { Data, Params, ServiceMethods } from '../domain/service/service.js'
import type { AroundHook, HookContext, HookMap } from './hook-context.js'
import type { Publisher } from './channel.js'

export type EventListener = (data: unknown, context?: HookContext) => void

/**
 * What `app.service(path)` returns: the registered service (its own members stay reachable through
 * the prototype, e.g. `createQuery`) with hook-running methods, service events and publishers.
 */
export interface ServiceHandle<T = Data> extends ServiceMethods<T> {
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

/** A service's custom method, as the app calls it: `(data, params)`. */
export type CustomMethod = (data: unknown, params?: Params) => Promise<unknown>
