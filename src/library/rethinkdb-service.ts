import type { R, RStream } from 'rethinkdb-ts'
import { AdapterService, type AdapterServiceOptions } from '../application/adapter-service.js'
import type { Logger } from '../domain/logger.js'
import type { JsonSchemaObject } from '../domain/schema/json-schema.js'
import type { Data } from '../domain/service/service.js'
import type { StoreIndex } from '../domain/store/store-factory.js'
import { RethinkDbStore } from '../infrastructure/rethinkdb/rethinkdb-store.js'

/** The options of `service(options)`, as Feathers database adapters take them (docs/reference/stores/rethinkdb.md). */
export interface RethinkDbServiceOptions extends AdapterServiceOptions {
  /** The initialised rethinkdb-ts `r` with its connection pool. */
  Model: R
  /** Table name. */
  name: string
  /** Listen to the table changefeed and send real-time events from it (default true). */
  watch?: boolean
  /** Another database on the same connection; created by init() when missing. */
  db?: string
  /** Id field, the table's primary key (default 'id'). */
  id?: string
  /** Secondary indexes init() creates and queries use: `[{ fields: ['room'] }, { fields: ['room', 'at'] }]`. */
  indexes?: readonly StoreIndex[]
  /** The schema of the stored records: fields of declared types are queried without type guards. */
  schema?: JsonSchemaObject
  logger?: Logger
}

/**
 * The RethinkDB adapter as a service: AdapterService semantics plus `init()` and `createQuery()`.
 * `params.rethinkdb` (e.g. built from createQuery in a before hook) replaces the base query of find.
 *
 * It lives here, not beside the store in src/infrastructure/rethinkdb: it puts a driven adapter
 * (the store) together with an application use case (AdapterService), which is composition — the
 * job of src/container.ts for the server and of these entries for a project that imports plumage.
 * So driven adapters never build on the application (the `infrastructure-not-application` rule),
 * with no exception to name.
 */
export class RethinkDbService<T extends Data = Data> extends AdapterService<T> {
  declare readonly store: RethinkDbStore<T>

  constructor(options: RethinkDbServiceOptions) {
    const { Model, name, watch, db, id, indexes, schema, logger, ...serviceOptions } = options
    super(new RethinkDbStore<T>({ r: Model, table: name, db, id, watch, indexes, schema, logger }), serviceOptions)
  }

  /** Creates the database and the table when missing; `primaryKey` defaults to the id field. */
  init(options: { primaryKey?: string } = {}): Promise<void> {
    return this.store.init(options)
  }

  /** A ReQL query with the common filter criteria of `query` applied, without pagination. */
  createQuery(query: Record<string, unknown> = {}): RStream<Data> {
    return this.store.createQuery(this.parse({ query }))
  }
}

/** The spec's factory: `service({ Model: r, name: 'messages', paginate: { default: 10, max: 50 } })`. */
export function service<T extends Data = Data>(options: RethinkDbServiceOptions): RethinkDbService<T> {
  return new RethinkDbService<T>(options)
}
