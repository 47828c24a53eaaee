/**
 * `plumage/postgres`: the PostgreSQL store (one table of JSONB documents per store, events from the database's
 * event log, so several instances and direct SQL writes publish each change once), its database and factory,
 * the settings `STORE=postgres` reads, and the Feathers-style `service(options)`.
 *
 * @module plumage/postgres
 */
export { PostgresDatabase, type PostgresDatabaseOptions } from '../infrastructure/postgres/postgres-database.js'
export { PostgresStore, type PostgresStoreOptions } from '../infrastructure/postgres/postgres-store.js'
export {
  PostgresStoreFactory,
  type PostgresStoreFactoryOptions
} from '../infrastructure/postgres/postgres-store-factory.js'
export {
  readPostgresSettings,
  redactPostgresUrl,
  type PostgresSettings
} from '../infrastructure/postgres/postgres-settings.js'
export { PostgresService, service, type PostgresServiceOptions } from './postgres-service.js'
