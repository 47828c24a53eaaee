import { rethinkDbStoreModule } from '../infrastructure/rethinkdb/rethinkdb-module.js'
import type { PlumageModule } from './module.js'

/**
 * STORE=rethinkdb: collections, unique keys, sessions and recovery's history
 * in RethinkDB (src/infrastructure/rethinkdb).
 */
export const module: PlumageModule = {
  bind: (container, { env }) => container.load(rethinkDbStoreModule(env))
}
