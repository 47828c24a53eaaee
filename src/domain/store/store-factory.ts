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
  /** Whether the backing store answers right now; resolves false (never rejects) within a few seconds. */
  ping(): Promise<boolean>
}
export const StoreFactory = Symbol.for('StoreFactory')
