import type { EventEmitter } from 'node:events'
import type { ServiceSchemas } from '../domain/schema/json-schema.js'
import type { SchemaValidator } from '../domain/schema/schema-validator.js'
import type { Publisher } from './channel.js'
import type { HookChain, HookRegistry } from './hook-registry.js'
import type { CompiledSchemas } from './schema/compile-schemas.js'
import type { ServiceHandle } from './service-handle.js'

/*
 * The shapes of service registration: what `app.use` takes (ServiceOptions), what the app keeps per
 * service (ServiceEntry), and what it tells documentation generators (ServiceDescription).
 */

export interface ServiceOptions {
  /** Methods reachable by external callers; default: the standard methods the service has. */
  methods?: string[]
  /** Custom events the service sends besides created/updated/patched/removed. */
  events?: string[]
  /**
   * JSON Schemas of the service's records, data, patch data and query: applied by the
   * `validateSchemas()` hook, and published in the OpenAPI document.
   */
  schemas?: ServiceSchemas
}

export interface AppOptions {
  /** Compiles the schemas services are registered with (the Ajv adapter, bound in the composition root). */
  validator?: SchemaValidator
}

/** What the app knows about one registered service (for generated documentation such as OpenAPI). */
export interface ServiceDescription {
  path: string
  service: object
  /** The methods external callers may use. */
  methods: readonly string[]
  events: readonly string[]
  schemas?: ServiceSchemas
  /** Every hook of one method, app-level included, in the order they run. */
  hooks(method: string): HookChain
}

/**
 * A service whose store publishes its own changes (e.g. RethinkDB's event log): its events come from
 * `watch`, on every process, instead of from its method results.
 */
export interface LiveService {
  watch(listener: (change: { event: string; record: unknown }) => void): () => void
  /** Resolves once the change stream is live: setup() waits for it. */
  whenWatching?(): Promise<void>
  /** Sends a custom event through the change stream (`service.emit` then reaches every process once). */
  publish?(event: string, data: unknown): Promise<void>
}

/** Everything the app keeps about one registered service; transports receive it through `lookup`. */
export interface ServiceEntry {
  path: string
  service: object
  handle: ServiceHandle
  methods: string[]
  events: Set<string>
  hooks: HookRegistry
  chains: Map<string, HookChain>
  emitter: EventEmitter
  publishers: Map<string, Publisher>
  protectedFields: Set<string>
  route?: string[]
  live: boolean
  unwatch?: () => void
  schemas?: CompiledSchemas
}

export interface Lookup {
  entry: ServiceEntry
  route: Record<string, string>
  id?: string
}
