/**
 * `plumage/rethinkdb`: the RethinkDB store (one table per store, events from its event log, see
 * docs/reference/stores/rethinkdb.md), its factory and connection, and the Feathers-style `service(options)`.
 *
 * @module plumage/rethinkdb
 */
export {
  connectRethinkDb,
  parseRethinkDbUrl,
  type ConnectOptions,
  type RethinkDbConnection
} from '../infrastructure/rethinkdb/rethinkdb-connection.js'
export { RethinkDbStore, type RethinkDbStoreOptions } from '../infrastructure/rethinkdb/rethinkdb-store.js'
export {
  RethinkDbStoreFactory,
  type RethinkDbStoreFactoryOptions
} from '../infrastructure/rethinkdb/rethinkdb-store-factory.js'
export { RethinkDbService, service, type RethinkDbServiceOptions } from './rethinkdb-service.js'
