import { ContainerModule } from 'inversify'
import { LoginAttempts } from '../../domain/auth/login-attempts.js'
import { SessionStore } from '../../domain/auth/session-store.js'
import { StoreFactory } from '../../domain/store/store-factory.js'
import { UniqueKeys } from '../../domain/unique-keys.js'
import type { StoreModule } from '../config/store-module.js'
import { InMemoryLoginAttempts } from './in-memory-login-attempts.js'
import { InMemorySessionStore } from './in-memory-session-store.js'
import { InMemoryStoreFactory } from './in-memory-store-factory.js'
import { InMemoryUniqueKeys } from './in-memory-unique-keys.js'

/**
 * `STORE=memory` (the default): collections, unique keys, sessions and login counters in this
 * process, gone when it exits. It reads no settings. One process only: instances of the app that
 * must share data, sessions and limits need a store they all reach (`rethinkdb`).
 */
export const memoryStoreModule: StoreModule = () =>
  new ContainerModule(({ bind }) => {
    bind<StoreFactory>(StoreFactory).to(InMemoryStoreFactory).inSingletonScope()
    bind<UniqueKeys>(UniqueKeys).to(InMemoryUniqueKeys).inSingletonScope()
    bind<SessionStore>(SessionStore).to(InMemorySessionStore).inSingletonScope()
    bind<LoginAttempts>(LoginAttempts).to(InMemoryLoginAttempts).inSingletonScope()
  })
