import { InMemoryStoreFactory } from '../../src/infrastructure/memory/in-memory-store-factory.js'
import { storeContract } from '../contract/store.contract.js'

// Your adapter's factory here; the suite creates one store per id-field variant and empties it between tests.
const factory = new InMemoryStoreFactory()

storeContract('memory (through its StoreFactory)', async ({ id }) => ({
  store: factory.create(`contract_${id}`, { id }),
  close: () => factory.close()
}))
