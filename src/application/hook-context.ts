import type { NullableId, Params } from '../domain/service/service.js'
import type { App } from './app.js'
import type { ServiceHandle } from './service-handle.js'

export type HookType = 'around' | 'before' | 'after' | 'error'

/** What every hook sees; one object per call, shared by all its hooks. */
export interface HookContext<T = unknown> {
  readonly app: App
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
  /** REST only: `status` overrides the status code, `location` answers 303 with that Location. */
  http: { status?: number; location?: string }
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
