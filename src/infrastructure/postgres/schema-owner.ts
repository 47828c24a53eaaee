import type { QueryResult } from 'pg'
import type { PostgresDatabase } from './postgres-database.js'

/**
 * What the small PostgreSQL adapters beside the stores share (unique keys, sessions, login
 * counters, connection sessions): their tables are made on first use, once per process and again
 * after a failure, under the schema lock (safe when several instances start at once), and every
 * query waits for them.
 */
export abstract class SchemaOwner {
  private ready?: Promise<void>

  constructor(protected readonly db: PostgresDatabase) {}

  /** Makes the tables; the first query calls it too. */
  setup(): Promise<void> {
    return (this.ready ??= this.db.schema(this.creating(), this.tables()).catch((error: unknown) => {
      this.ready = undefined
      throw error
    }))
  }

  /** The adapter's idempotent schema statements (`CREATE … IF NOT EXISTS`). */
  protected abstract tables(): string[]

  /** What setup does, for its error message ("create the session tables"). */
  protected abstract creating(): string

  protected async run<R = Record<string, unknown>>(
    operation: string,
    text: string,
    values?: unknown[]
  ): Promise<QueryResult<R>> {
    await this.setup()
    return this.db.query<R>(operation, text, values)
  }
}
