import { ContainerModule } from 'inversify'
import { StoreFactory } from '../../domain/store/store-factory.js'
import { UniqueKeys } from '../../domain/unique-keys.js'
import type { StoreModule } from '../config/store-module.js'
import { InMemoryStoreFactory } from './in-memory-store-factory.js'
import { InMemoryUniqueKeys } from './in-memory-unique-keys.js'

/**
 * `STORE=memory` (the default): collections and unique keys in this process, gone when it exits (the sessions and
 * recovery modules keep theirs in this process too when the store binds none). It reads no settings. One process
 * only: instances of the app that must share data, sessions and limits need a store they all reach.
 */
export const memoryStoreModule: StoreModule = () =>
  new ContainerModule(({ bind }) => {
    bind<StoreFactory>(StoreFactory).to(InMemoryStoreFactory).inSingletonScope()
    bind<UniqueKeys>(UniqueKeys).to(InMemoryUniqueKeys).inSingletonScope()
  })
