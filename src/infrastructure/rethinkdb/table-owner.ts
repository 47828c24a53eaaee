import type { R } from 'rethinkdb-ts'
import { silentLogger, type Logger } from '../../domain/logger.js'
import { rethinkdbDriver } from './rethinkdb-driver.js'
import { runQuery, toStoreError } from './rethinkdb-errors.js'

export interface TableOwnerOptions {
  db: string
  logger?: Logger
  /**
   * The driver's `r` with its connection pool (default: rethinkdb-ts's module-level one, which the store factory
   * connects).
   */
  r?: R
  /** Replicas and shards of the tables (a cluster, RETHINKDB_REPLICAS/SHARDS), as the stores' tables get them. */
  replicas?: number
  shards?: number
}

/**
 * What the small RethinkDB adapters beside the stores share (unique keys, sessions, login counters,
 * connection sessions): their tables are made on first use, once per process and again after a
 * failure (`create`, with ensureTable: safe when several processes start at once), and every query
 * waits for them and reports a driver failure as a store error (503 when the database is away).
 */
export abstract class TableOwner {
  protected readonly logger: Logger
  private ready?: Promise<void>

  constructor(protected readonly options: TableOwnerOptions) {
    this.logger = options.logger ?? silentLogger
  }

  /** Makes the tables (and waits for their indexes); the first query calls it too. */
  setup(): Promise<void> {
    this.ready ??= this.create().catch((error: unknown) => {
      this.ready = undefined
      throw toStoreError(error, this.logger, this.creating())
    })
    return this.ready
  }

  /** Makes the adapter's tables. */
  protected abstract create(): Promise<void>

  /** What `create` does, for its error message ("create the session tables"). */
  protected abstract creating(): string

  protected run<T>(operation: string, query: () => Promise<T>): Promise<T> {
    return runQuery(() => this.setup(), this.logger, operation, query)
  }

  /**
   * Where the tables live: with the stores' replicas, so that losing a server on a cluster does not
   * leave the logins, revocations or counters of the app on a table without a primary.
   */
  protected placement(): { replicas?: number; shards?: number } {
    const { replicas, shards } = this.options
    return { ...(replicas !== undefined ? { replicas } : {}), ...(shards !== undefined ? { shards } : {}) }
  }

  protected r(): R {
    return this.options.r ?? rethinkdbDriver().r
  }
}
