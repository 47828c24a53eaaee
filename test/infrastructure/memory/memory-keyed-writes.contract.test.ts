import { InMemoryKeyedWrites } from '../../../src/infrastructure/memory/in-memory-keyed-writes.js'
import { clone, InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { runKeyedWritesContract } from '../../../src/testing/index.js'

// The memory store's idempotency keys against the kit, in this process: the store opened twice over one name is the
// same store. Its keys are the idempotency module's part (the module gives them to the memory stores).
const stores = new Map<string, InMemoryStore>()
runKeyedWritesContract({
  adapter: 'memory',
  cases: 'all',
  open: async ({ name, id, watch }) => {
    if (!stores.has(name))
      stores.set(name, new InMemoryStore({ id, watch, keyedWrites: new InMemoryKeyedWrites(clone) }))
    return { store: stores.get(name)! }
  }
})
