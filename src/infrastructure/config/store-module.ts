import type { ContainerModule } from 'inversify'
import type { Env } from './environment.js'

/**
 * A store adapter as the composition root loads it (src/container.ts, `storeModules`, by the STORE
 * setting). Called only when its store is chosen, it reads and checks its own settings from the
 * environment (a ConfigError naming the variable when one is wrong) and returns the Inversify module
 * that binds the persistence ports: StoreFactory, and where it can, UniqueKeys, SessionStore and
 * LoginAttempts on the same database (the root keeps those in process memory, with a warning, when a
 * module leaves them out). The module may resolve Logger, Clock and Metrics, which the root always binds.
 */
export type StoreModule = (env: Env) => ContainerModule
