import { InMemoryStoreFactory } from '../../src/infrastructure/memory/in-memory-store-factory.js'
import { storeContract } from '../contract/store.contract.js'

// Your adapter's factory here. The suite asks for stores by name and options (id field, indexes,
// schema), one set per id-field variant, and empties them between tests.
const factory = new InMemoryStoreFactory()

storeContract('memory (through its StoreFactory)', async ({ name, ...options }) => ({
  store: factory.create(name, options),
  close: () => factory.close()
}))
