import { createHash } from 'node:crypto'
import { idempotencyHooks } from '../application/idempotency/index.js'
import { StoreFactory } from '../domain/store/store-factory.js'
import { Config } from '../infrastructure/config/config.js'
import { InMemoryKeyedWrites } from '../infrastructure/memory/in-memory-keyed-writes.js'
import { clone } from '../infrastructure/memory/in-memory-store.js'
import { InMemoryStoreFactory } from '../infrastructure/memory/in-memory-store-factory.js'
import type { PlumageModule } from './module.js'

/** How long a repeat waits for the first request of its key still in flight elsewhere, before a 409. */
const WAIT_MS = 5_000

/**
 * IDEMPOTENCY=true (the default): writes with an idempotency key are applied once (src/application/idempotency);
 * the stores honour the keys (`Store.keyedWrites`: memory, PostgreSQL, RethinkDB), each with its part in its own
 * folder (the database stores always have theirs; their setup makes no table for it until a key comes, on RethinkDB).
 */
export const module: PlumageModule = {
  // The memory store honours keys with its part of this module (the database stores have theirs in their folders).
  bind(container, { config }) {
    if (config.store !== 'memory') return
    const stores = new InMemoryStoreFactory()
    stores.keyedWrites = () => new InMemoryKeyedWrites(clone)
    container.rebind<StoreFactory>(StoreFactory).toConstantValue(stores)
  },
  extend(app, container) {
    const config = container.get<Config>(Config)
    app.hooks(
      idempotencyHooks({
        retentionMs: config.idempotencyRetentionMs,
        waitMs: WAIT_MS,
        digest: (text) => createHash('sha256').update(text).digest('base64url')
      })
    )
  }
}
