import { injectable } from 'inversify'
import type { Data } from '../../domain/service/service.js'
import type { Store } from '../../domain/store/store.js'
import type { StoreFactory, StoreHealth, StoreOptions } from '../../domain/store/store-factory.js'
import type { InMemoryKeyedWrites } from './in-memory-keyed-writes.js'
import { InMemoryStore } from './in-memory-store.js'

/** The embedded adapter: every collection is an InMemoryStore (data lives as long as the process). */
@injectable()
export class InMemoryStoreFactory implements StoreFactory {
  /** Makes each store's idempotency keys: set by the idempotency module when it is on. */
  keyedWrites?: () => InMemoryKeyedWrites

  create<T extends Data = Data>(_name: string, options: StoreOptions = {}): Store<T> {
    return new InMemoryStore<T>({ id: options.id, keyedWrites: this.keyedWrites?.() })
  }

  async close(): Promise<void> {}

  /** The data lives in this process: ready whenever the process answers. */
  async health(): Promise<StoreHealth> {
    return { ready: true, checks: { reachable: true }, problems: [] }
  }
}
