import type { Client, Pool, PoolClient, Query, QueryResult } from 'pg'
import { Unavailable } from '../../domain/errors/errors.js'
import { silentLogger, type Logger } from '../../domain/logger.js'
import { pgDriver } from './pg-driver.js'
import { isRetryable, isUnavailable, sqlState, toStoreError } from './postgres-errors.js'
import { redactPostgresUrl } from './postgres-settings.js'

export interface PostgresDatabaseOptions {
  /** POSTGRES_URL (credentials, `sslmode` and the other libpq parameters node-postgres reads). */
  url: string
  /** POSTGRES_PASSWORD_FILE's password when the URL has none. */
  password?: string
  /** Connections in the pool (default 10). */
  poolSize?: number
  /** How long to wait for a connection, in ms (default 30 s). */
  timeoutMs?: number
  logger?: Logger
}

/**
 * Every schema change of plumage takes this transaction-level advisory lock first: of several
 * instances starting together, one creates a table while the others wait and then find it
 * (`CREATE TABLE IF NOT EXISTS` alone is not safe when run concurrently: both may try to insert the type).
 */
const SCHEMA_LOCK = 0x706c756d // 'plum'

/**
 * At most this many statements are prepared (per connection, the same ones on each): callers
 * prepare statements of a few fixed shapes, and a bound keeps statements whose text depends on a
 * request from piling up on the server; past it, statements run unnamed.
 */
const PREPARED_LIMIT = 200

/**
 * One PostgreSQL database as the adapters use it: a node-postgres pool, queries whose failures
 * become domain errors (503 when the database is away), transactions, and schema changes that are
 * safe when several instances start at once. The pool is made on first use.
 */
export class PostgresDatabase {
  readonly logger: Logger
  readonly where: string
  private pool?: Pool
  private closed = false
  private readonly prepared = new Map<string, string>()

  constructor(private readonly options: PostgresDatabaseOptions) {
    this.logger = options.logger ?? silentLogger
    this.where = redactPostgresUrl(options.url)
  }

  /**
   * Runs one statement (an implicit transaction of its own); values are always parameters.
   * `prepare`: the statement is parsed and planned once per connection, then only bound and run —
   * for hot statements whose plan does not depend on their values (a primary-key lookup; a plan
   * that needs a field name's value to match an expression index must stay unnamed).
   */
  query<R = Record<string, unknown>>(
    operation: string,
    text: string,
    values?: unknown[],
    options?: { prepare?: boolean }
  ): Promise<QueryResult<R>> {
    let sent: Promise<QueryResult<R>>
    try {
      const name = options?.prepare ? this.statementName(text) : undefined
      // As text and values, or a Query named after it is made: node-postgres copies a config object (property by
      // property, 1.3 µs) on every query.
      sent = name
        ? this.connections().query<R>(namedQuery(name, text, values))
        : this.connections().query<R>(text, values)
    } catch (error) {
      return Promise.reject(toStoreError(error, this.logger, operation))
    }
    // A rejection handler rather than an async function awaiting the driver: one promise and one step fewer a call.
    return sent.then(undefined, (error: unknown) => {
      throw toStoreError(error, this.logger, operation)
    })
  }

  /** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  async transaction<T>(operation: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    try {
      return await this.inTransaction(work)
    } catch (error) {
      throw toStoreError(error, this.logger, operation)
    }
  }

  /**
   * Runs schema statements in one transaction under the schema lock: idempotent statements
   * (`IF NOT EXISTS`, `CREATE OR REPLACE`) that several instances may run at the same moment. At
   * startup the server may not be up yet: it is waited for (`timeoutMs`, one log line), while a
   * refused login or a missing database stops at once with one line saying what to check.
   */
  async schema(operation: string, statements: readonly string[]): Promise<void> {
    const deadline = Date.now() + (this.options.timeoutMs ?? 30_000)
    for (let waiting = false; ; waiting = true) {
      try {
        return await this.inTransaction(async (client) => {
          await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK])
          for (const statement of statements) await client.query(statement)
        })
      } catch (error) {
        const state = sqlState(error)
        const message = error instanceof Error ? error.message : String(error)
        // Domain errors, so src/main.ts prints one line: what failed, where (the password masked) and what to check.
        if (state?.startsWith('28') || state === '3D000')
          throw new Unavailable(
            `PostgreSQL at ${this.where} refused the connection: ${message} (check the user, password and database of POSTGRES_URL, or POSTGRES_PASSWORD_FILE; README "Run with PostgreSQL" creates them)`
          )
        // A deadlock with live writes (the statements lock tables they write to) rolled the setup back: again.
        if (isRetryable(error) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80))
          continue
        }
        if (!isUnavailable(error)) throw toStoreError(error, this.logger, operation)
        if (Date.now() >= deadline)
          throw new Unavailable(
            `PostgreSQL at ${this.where} is unavailable: ${message} (is it running? check the host and port of POSTGRES_URL; waited ${Math.round((this.options.timeoutMs ?? 30_000) / 1000)} s, POSTGRES_TIMEOUT)`
          )
        if (!waiting)
          this.logger.warn(
            `waiting for PostgreSQL at ${this.where} (up to ${Math.round((deadline - Date.now()) / 1000)} s)`,
            { error: message }
          )
        await new Promise((resolve) => setTimeout(resolve, 500))
      }
    }
  }

  private async inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connections().connect()
    let broken: Error | undefined
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback))
      throw error
    } finally {
      client.release(broken)
    }
  }

  /**
   * A connection of the pool for a transaction the caller runs statement by statement (a batch of
   * writes: PostgresWrites), with `on`; the caller releases it.
   */
  async checkout(operation: string): Promise<PoolClient> {
    try {
      return await this.connections().connect()
    } catch (error) {
      throw toStoreError(error, this.logger, operation)
    }
  }

  /** Runs one statement on a checked-out connection, prepared as query() prepares; the driver's errors as they are. */
  on<R = Record<string, unknown>>(
    client: PoolClient,
    text: string,
    values: unknown[],
    prepare: boolean
  ): Promise<QueryResult<R>> {
    const name = prepare ? this.statementName(text) : undefined
    if (!name) return client.query<R>(text, values)
    const query = namedQuery(name, text, values)
    return new Promise((resolve, reject) =>
      client.query<R>(query, (error, result) => (error ? reject(error) : resolve(result)))
    )
  }

  /** A connection of its own, outside the pool (the event log's LISTEN); the caller ends it. */
  async connect(): Promise<Client> {
    const client = new (pgDriver().Client)(this.connectionOptions())
    await client.connect()
    return client
  }

  async close(): Promise<void> {
    this.closed = true
    await this.pool?.end()
  }

  private statementName(text: string): string | undefined {
    let name = this.prepared.get(text)
    if (!name && this.prepared.size < PREPARED_LIMIT) this.prepared.set(text, (name = `plumage_${this.prepared.size}`))
    return name
  }

  private connections(): Pool {
    if (this.closed) throw new Error('The PostgreSQL pool is closed')
    if (!this.pool) {
      this.pool = new (pgDriver().Pool)({
        ...this.connectionOptions(),
        max: this.options.poolSize ?? 10,
        // Writes through the pool are plumage's own: the event triggers leave the NOTIFY to the store,
        // which sends one after its commit (PostgresEventLog.committed).
        onConnect: (client) => client.query(`SET plumage.writer TO 'store'`)
      })
      // An idle connection that breaks (a server restart) is dropped from the pool; the next query opens another.
      this.pool.on('error', (error) =>
        this.logger.warn('PostgreSQL: an idle connection was lost', { error: error.message })
      )
      // A checked-out connection (a transaction's) has no pool listener: a server that ends it between two of its
      // statements emits 'error' on it, which unheard would end the process. Heard here; the next statement fails.
      this.pool.on('connect', (client) =>
        client.on('error', (error) => this.logger.warn('PostgreSQL: a connection was lost', { error: error.message }))
      )
    }
    return this.pool
  }

  private connectionOptions() {
    return {
      connectionString: this.options.url,
      ...(this.options.password !== undefined ? { password: this.options.password } : {}),
      connectionTimeoutMillis: this.options.timeoutMs ?? 30_000,
      application_name: 'plumage'
    }
  }
}

/** A query of a prepared statement: made from its text and values, then named (see PostgresDatabase.query). */
function namedQuery(name: string, text: string, values: unknown[] | undefined): Query {
  const query = new (pgDriver().Query)(text, values)
  query.name = name
  return query
}

/** A double-quoted SQL identifier (a table named after a service); never built from request data. */
export function identifier(name: string): string {
  if (name.includes('\0') || Buffer.byteLength(name) > 63)
    throw new Error(`'${name}' cannot name a PostgreSQL table: at most 63 bytes, no NUL`)
  return pgDriver().escapeIdentifier(name)
}
