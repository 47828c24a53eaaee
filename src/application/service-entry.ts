import type { EventEmitter } from 'node:events'
import type { ServiceSchemas } from '../domain/schema/json-schema.js'
import type { SchemaValidator } from '../domain/schema/schema-validator.js'
import type { Publisher } from './channel.js'
import type { AppExtension } from './extensions.js'
import type { ServiceHandle } from './hook-context.js'
import type { HookChain, HookRegistry } from './hook-registry.js'
import type { HookSetup } from './hook-setup.js'
import type { CompiledSchemas } from './schema/compile-schemas.js'
import type { EventResolvers } from './event-stages.js'

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
  /** Optional modules' extensions (metrics, tracing, connection recovery…), as `app.extend` adds them. */
  extensions?: readonly AppExtension[]
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
  /** `trace`: the `traceparent` of the write that caused the change, when the store knows it. */
  watch(listener: (change: { event: string; record: unknown; trace?: string }) => void): () => void
  /** Resolves once the change stream is live: setup() waits for it. */
  whenWatching?(): Promise<void>
  /** Sends a custom event through the change stream (`service.emit` then reaches every process once). */
  publish?(event: string, data: unknown): Promise<void>
}

/** Everything the app keeps about one registered service. Internal to the application layer. */
export interface ServiceEntry {
  /** The normalised path (`users/:userId/posts`: no leading or trailing slash). */
  readonly path: string
  /** The object passed to `app.use`; its methods are called with the handle as `this`. */
  readonly service: object
  /** What `app.service(path)` returns: the service's prototype child with hook-running methods. */
  readonly handle: ServiceHandle
  /** The methods external callers may use (ServiceOptions.methods). */
  readonly methods: readonly string[]
  /** Every event the service may publish: the standard four plus its custom ones. */
  readonly events: ReadonlySet<string>
  /** Hooks registered on this service (`handle.hooks(...)`). */
  readonly hooks: HookRegistry
  /** Per method, the app's and the service's hooks combined; cleared when hooks are added. */
  readonly chains: Map<string, HookChain>
  /** Local listeners of service events (`handle.on`). */
  readonly emitter: EventEmitter
  /** Publishers registered on this service, by event ('*' for all). */
  readonly publishers: Map<string, Publisher>
  /** Fields `protect(...)` hooks of this service hide; stripped from live-store events too. */
  readonly protectedFields: Set<string>
  /** Setup steps carried by this service's hooks (hook-setup.ts), run by `App.setup`. */
  readonly setupSteps: Set<HookSetup>
  /** Resolvers this service's hooks carry (event-stages.ts): run on the events its live store publishes. */
  readonly eventResolvers: EventResolvers
  /** The path's segments when it has `:placeholders`; undefined for a plain path. */
  readonly route?: readonly string[]
  /** The service's events come from its store (LiveService), not from its method results. */
  readonly live: boolean
  /** Stops following the live store's changes; set while the app is set up. */
  unwatch?: () => void
  readonly schemas?: CompiledSchemas
}

/** A path resolved to a service: its entry, the `:placeholder` values, and a trailing id segment if any. */
export interface Resolved {
  entry: ServiceEntry
  route: Record<string, string>
  id?: string
}
