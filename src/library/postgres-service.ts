import { AdapterService, type AdapterServiceOptions } from '../application/adapter-service.js'
import type { JsonSchemaObject } from '../domain/schema/json-schema.js'
import type { Data } from '../domain/service/service.js'
import type { StoreIndex } from '../domain/store/store-factory.js'
import type { PostgresStore } from '../infrastructure/postgres/postgres-store.js'
import type { PostgresStoreFactory } from '../infrastructure/postgres/postgres-store-factory.js'

/** The options of `service(options)`, as Feathers database adapters take them (Model, name, id, paginate, …). */
export interface PostgresServiceOptions extends AdapterServiceOptions {
  /**
   * The database as the stores share it: a PostgresStoreFactory over a PostgresDatabase (its pool, and the one
   * event log its services publish through; `watch: false` on the factory turns events from the log off).
   */
  Model: PostgresStoreFactory
  /** Table name. */
  name: string
  /** Id field (default 'id'). */
  id?: string
  /** Expression indexes init() creates and queries use: `[{ fields: ['room'] }, { fields: ['room', 'at'] }]`. */
  indexes?: readonly StoreIndex[]
  /** The schema of the stored records: fields of one declared type are filtered and sorted without type guards. */
  schema?: JsonSchemaObject
}

/**
 * The PostgreSQL adapter as a service: AdapterService semantics over a table of JSONB documents, plus `init()`.
 * Composition like RethinkDbService (see rethinkdb-service.ts): a driven adapter put together with an
 * application use case, which is why it lives among the library entries.
 */
export class PostgresService<T extends Data = Data> extends AdapterService<T> {
  declare readonly store: PostgresStore<T>

  constructor(options: PostgresServiceOptions) {
    const { Model, name, id, indexes, schema, ...serviceOptions } = options
    const store = Model.create<T>(name, {
      ...(id !== undefined ? { id } : {}),
      ...(indexes ? { indexes } : {}),
      ...(schema ? { schema } : {})
    }) as PostgresStore<T>
    super(store, serviceOptions)
  }

  /** Creates the table, its indexes and its event triggers when missing (safe when instances start together). */
  init(): Promise<void> {
    return this.store.setup()
  }
}

/** The Feathers-style factory: `service({ Model: factory, name: 'messages', paginate: { default: 10, max: 50 } })`. */
export function service<T extends Data = Data>(options: PostgresServiceOptions): PostgresService<T> {
  return new PostgresService<T>(options)
}
