import type { R } from 'rethinkdb-ts'
import type { Logger } from '../../domain/logger.js'
import type { Metrics } from '../../domain/metrics.js'
import type { JsonSchemaObject } from '../../domain/schema/json-schema.js'
import type { StoreIndex } from '../../domain/store/store-factory.js'
import type { EventLog } from './event-log.js'

/** What a RethinkDbStore is built from (the factory fills it from configuration and StoreOptions). */
export interface RethinkDbStoreOptions {
  /**
   * The rethinkdb-ts `r` with an open pool (see connectRethinkDb). The store runs queries on it but
   * never drains it: whoever opened the pool closes it, after closing the stores.
   */
  r: R
  /** Table name (the spec's `name`). */
  table: string
  /** Database; defaults to the pool's default database. `init()` creates it when missing. */
  db?: string
  /** Id field; must be the table's primary key (default 'id'). */
  id?: string
  /**
   * Publish every change of the table, on every instance, exactly once (default true): the store's
   * writes go through the event log, and writes made directly in the database are picked up too.
   */
  watch?: boolean
  /** The database's event log; shared by every store of the database (one follower per process). */
  events?: EventLog
  /** Also publish writes made directly in the database, e.g. from the admin UI (default true). */
  directWrites?: boolean
  /**
   * Secondary indexes init() creates and waits for, and queries use where they give the same
   * answer (query-plan.ts): `{ fields: ['city'] }`, nested `['address.city']`, compound `['city', 'age']`.
   */
  indexes?: readonly StoreIndex[]
  /** The schema of the stored records: fields of known types need no type guards (domain/schema/field-shapes.ts). */
  schema?: JsonSchemaObject
  /** Replication of the table in a cluster; init() applies it when the table differs. */
  replicas?: number
  shards?: number
  /** How long setup() waits for the change feeds to go live (default 30 s). */
  timeoutMs?: number
  logger?: Logger
  /** Where the table feed's state is reported (the event log reports its own). */
  metrics?: Metrics
  /** Settles when the pool is open (a factory connecting in the background); setup() waits for it. */
  connected?: Promise<unknown>
}
