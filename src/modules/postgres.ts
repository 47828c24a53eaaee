import { postgresStoreModule } from '../infrastructure/postgres/postgres-module.js'
import type { PlumageModule } from './module.js'

/**
 * STORE=postgres: collections, unique keys, sessions and recovery's history
 * in PostgreSQL (src/infrastructure/postgres).
 */
export const module: PlumageModule = {
  bind: (container, { env }) => container.load(postgresStoreModule(env))
}
