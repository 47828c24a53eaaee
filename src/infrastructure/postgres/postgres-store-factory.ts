import type { Data } from '../../domain/service/service.js'
import type { Store } from '../../domain/store/store.js'
import type { StoreFactory, StoreHealth, StoreOptions } from '../../domain/store/store-factory.js'
import type { PostgresDatabase } from './postgres-database.js'
import { PostgresEventLog } from './postgres-event-log.js'
import { PostgresStore } from './postgres-store.js'

export interface PostgresStoreFactoryOptions {
  /** Publish every change through the event log (default true). */
  watch?: boolean
  /** How long whenWatching() waits for the event log (default 30 s). */
  timeoutMs?: number
  /** How long the event log keeps events (default 10 min). */
  eventRetentionMs?: number
  /** The active span's `traceparent` (tracing on): logged with each write's events. */
  traceparent?: () => string | undefined
  /** Most writes of one record that share one transaction (default 100, see PostgresWrites). */
  maxBatch?: number
}

/**
 * `STORE=postgres`: every collection is a table of JSONB documents in the database POSTGRES_URL
 * names. The factory owns the pool (through PostgresDatabase) and the one event log the stores share,
 * so a process follows one log whatever its number of services.
 */
export class PostgresStoreFactory implements StoreFactory {
  private events?: PostgresEventLog

  constructor(
    readonly db: PostgresDatabase,
    private readonly options: PostgresStoreFactoryOptions = {}
  ) {}

  create<T extends Data = Data>(name: string, options: StoreOptions = {}): Store<T> {
    const events = this.eventLog()
    return new PostgresStore<T>({
      db: this.db,
      table: name,
      ...(options.id !== undefined ? { id: options.id } : {}),
      ...(options.indexes ? { indexes: options.indexes } : {}),
      ...(options.schema ? { schema: options.schema } : {}),
      ...(events ? { events } : {}),
      ...(this.options.traceparent ? { traceparent: this.options.traceparent } : {}),
      ...(this.options.maxBatch !== undefined ? { maxBatch: this.options.maxBatch } : {})
    })
  }

  /** The database's event log, shared by the stores (made on first use); undefined without `watch`. */
  eventLog(): PostgresEventLog | undefined {
    if (!(this.options.watch ?? true)) return undefined
    return (this.events ??= new PostgresEventLog({
      db: this.db,
      logger: this.db.logger,
      ...(this.options.timeoutMs !== undefined ? { timeoutMs: this.options.timeoutMs } : {}),
      ...(this.options.eventRetentionMs !== undefined ? { retentionMs: this.options.eventRetentionMs } : {})
    }))
  }

  /**
   * Ready means: the server answers a query, and the event log is followed (an instance whose
   * follower is reconnecting misses nothing but delivers late, so probes hear 503 until then).
   * Bounded by `timeoutMs` (default 2 s).
   */
  async health(timeoutMs = 2000): Promise<StoreHealth> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))
    const answered = this.db.query('health', 'SELECT 1').then(
      () => true,
      () => false
    )
    try {
      const reachable = await Promise.race([answered, timedOut])
      const feeds = this.events?.healthy ?? true
      const problems = [
        ...(reachable ? [] : [`PostgreSQL at ${this.db.where} did not answer within ${timeoutMs} ms`]),
        ...(feeds ? [] : ['The PostgreSQL event log is reconnecting'])
      ]
      return {
        ready: problems.length === 0,
        checks: { reachable, ...(this.events ? { feeds } : {}) },
        problems
      }
    } finally {
      clearTimeout(timer)
    }
  }

  async close(): Promise<void> {
    await this.events?.stop()
    await this.db.close()
  }
}
