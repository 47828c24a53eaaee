import type { JsonSchemaObject } from '../schema/json-schema.js'
import type { Data } from '../service/service.js'
import type { Store } from './store.js'

export interface StoreOptions {
  /** Name of the id field (the primary key); default 'id'. */
  id?: string
  /**
   * Secondary indexes the store keeps for its queries, created by its setup. Results never depend
   * on them: a store without secondary indexes (memory) ignores them, the others answer faster.
   */
  indexes?: readonly StoreIndex[]
  /**
   * The shape of the stored records (e.g. the service's `result` schema). A store may rely on the
   * declared types and `required` fields to query faster; records must honour it.
   */
  schema?: JsonSchemaObject
}

/** One field (a dotted name reaches into nested objects), or several in order for a compound index. */
export interface StoreIndex {
  fields: readonly string[]
  /** Default: the fields joined by '_'. */
  name?: string
}

/** Creates the store behind one named collection (a table, a map…). The composition root picks the adapter. */
export interface StoreFactory {
  create<T extends Data = Data>(name: string, options?: StoreOptions): Store<T>
  /** Releases shared resources (connection pools) when the app stops. */
  close(): Promise<void>
  /** Whether the backing store is ready right now; resolves (never rejects) within a few seconds. */
  health(): Promise<StoreHealth>
}

/** What a health probe reports about the store. */
export interface StoreHealth {
  /** Reads and writes work and every change stream is live. */
  ready: boolean
  /** Each part checked, by name (e.g. `reachable`, `writable`, `feeds`): true when it is ready. */
  checks: Record<string, boolean>
  /** What is not ready, in words a person can act on; empty when ready. */
  problems: string[]
}
export const StoreFactory = Symbol.for('StoreFactory')
