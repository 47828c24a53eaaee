import type { Data } from '../service/service.js'
import type { Store } from './store.js'

export interface StoreOptions {
  /** Name of the id field (the primary key); default 'id'. */
  id?: string
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
