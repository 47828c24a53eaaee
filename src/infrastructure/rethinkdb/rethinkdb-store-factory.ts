import type { RDatum } from 'rethinkdb-ts'
import { silentLogger, type Logger } from '../../domain/logger.js'
import type { Metrics } from '../../domain/metrics.js'
import type { Data } from '../../domain/service/service.js'
import type { Store } from '../../domain/store/store.js'
import type { StoreFactory, StoreHealth, StoreOptions } from '../../domain/store/store-factory.js'
import { EventLog } from './event-log.js'
import { rethinkdbDriver } from './rethinkdb-driver.js'
import {
  connectRethinkDb,
  describeServers,
  parseRethinkDbUrl,
  type RethinkDbConnection,
  type RethinkDbTls
} from './rethinkdb-connection.js'
import { RethinkDbStore } from './rethinkdb-store.js'

export interface RethinkDbStoreFactoryOptions {
  logger?: Logger
  /** Publish every change through the event log and table changefeeds (default true). */
  watch?: boolean
  /** How long setup() waits for a first connection and for the feeds (default 30 s). */
  timeoutMs?: number
  /** Copies of each table in a cluster (RETHINKDB_REPLICAS); applied by init when a table differs. */
  replicas?: number
  /** Shards of each table (RETHINKDB_SHARDS). */
  shards?: number
  /** Also publish writes made directly in the database (default true). */
  directWrites?: boolean
  /** How long the event log keeps events (default 10 min). */
  eventRetentionMs?: number
  /** The password when the URL has none (RETHINKDB_PASSWORD_FILE). */
  password?: string
  /** TLS on the driver port (RETHINKDB_TLS_*). */
  tls?: RethinkDbTls
  /** Where the feeds' states and the event-log lag are reported. */
  metrics?: Metrics
  /** The active span's `traceparent` (tracing on): logged with each event, so other instances link to the write. */
  traceparent?: () => string | undefined
}

/**
 * `STORE=rethinkdb`: every collection is a table of the database named in RETHINKDB_URL (one server
 * or the servers of a cluster). The factory owns the one rethinkdb-ts pool: it starts connecting when
 * constructed (the composition root is synchronous), each store's setup() waits for it and creates
 * its table, and close() stops the stores' feeds before draining the pool. The stores share one
 * event log, so a process follows one log feed whatever its number of services.
 */
export class RethinkDbStoreFactory implements StoreFactory {
  private readonly connection: Promise<RethinkDbConnection>
  private readonly db: string
  private readonly where: string
  private readonly logger: Logger
  private readonly stores: RethinkDbStore[] = []
  private readonly stopping = new AbortController()
  private events?: EventLog

  constructor(
    url: string,
    private readonly options: RethinkDbStoreFactoryOptions = {}
  ) {
    const { db, servers } = parseRethinkDbUrl(url)
    this.db = db ?? 'test'
    this.where = describeServers(servers)
    this.logger = options.logger ?? silentLogger
    this.connection = connectRethinkDb(url, {
      logger: this.logger,
      timeoutMs: options.timeoutMs,
      signal: this.stopping.signal,
      ...(options.password !== undefined ? { password: options.password } : {}),
      ...(options.tls ? { tls: options.tls } : {})
    })
    // Reported by the first setup() that awaits it; never an unhandled rejection.
    this.connection.catch(() => undefined)
  }

  create<T extends Data = Data>(name: string, options: StoreOptions = {}): Store<T> {
    const { r } = rethinkdbDriver()
    const watch = this.options.watch ?? true
    if (watch) this.eventLog()
    const store = new RethinkDbStore<T>({
      r,
      table: name,
      db: this.db,
      ...(options.id !== undefined ? { id: options.id } : {}),
      ...(options.indexes ? { indexes: options.indexes } : {}),
      ...(options.schema ? { schema: options.schema } : {}),
      watch,
      ...(this.events ? { events: this.events } : {}),
      ...(this.options.directWrites !== undefined ? { directWrites: this.options.directWrites } : {}),
      ...(this.options.replicas !== undefined ? { replicas: this.options.replicas } : {}),
      ...(this.options.shards !== undefined ? { shards: this.options.shards } : {}),
      ...(this.options.timeoutMs !== undefined ? { timeoutMs: this.options.timeoutMs } : {}),
      logger: this.logger,
      ...(this.options.metrics ? { metrics: this.options.metrics } : {}),
      connected: this.connection
    })
    this.stores.push(store)
    return store
  }

  /**
   * The database's event log, shared by the stores (made on first use); undefined without `watch`.
   * The event history of connection recovery reads its order from it.
   */
  eventLog(): EventLog | undefined {
    if (!(this.options.watch ?? true)) return undefined
    return (this.events ??= new EventLog({
      r: rethinkdbDriver().r,
      db: this.db,
      logger: this.logger,
      ...(this.options.metrics ? { metrics: this.options.metrics } : {}),
      ...(this.options.eventRetentionMs !== undefined ? { retentionMs: this.options.eventRetentionMs } : {}),
      ...(this.options.traceparent ? { traceparent: this.options.traceparent } : {}),
      ...(this.options.replicas !== undefined ? { replicas: this.options.replicas } : {}),
      ...(this.options.shards !== undefined ? { shards: this.options.shards } : {})
    }))
  }

  /**
   * Ready means: the server answers, every table (and the event log) accepts writes, and every
   * change feed is live — an instance whose feeds are re-opening would miss nothing (the log replays)
   * but would deliver late, so probes hear 503 until then. Bounded by `timeoutMs` (default 2 s).
   */
  async health(timeoutMs = 2000): Promise<StoreHealth> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timedOut = new Promise<StoreHealth>((resolve) => {
      timer = setTimeout(
        () =>
          resolve(
            this.report({ reachable: false }, [`RethinkDB at ${this.where} did not answer within ${timeoutMs} ms`])
          ),
        timeoutMs
      )
    })
    try {
      return await Promise.race([this.check(), timedOut])
    } finally {
      clearTimeout(timer)
    }
  }

  async close(): Promise<void> {
    this.stopping.abort()
    await Promise.all(this.stores.map((store) => store.close()))
    await this.events?.stop()
    const connection = await this.connection.catch(() => undefined)
    await connection?.close()
  }

  private async check(): Promise<StoreHealth> {
    const connection = await this.connection.catch(() => undefined)
    if (!connection) return this.report({ reachable: false }, [`RethinkDB at ${this.where} cannot be reached`])
    const { r } = connection
    const tables = [
      ...new Set([...this.stores.map((store) => store.tableName), ...(this.events ? [this.events.tableName] : [])])
    ]
    let statuses: { name: string; writable: boolean }[]
    try {
      statuses = (await r
        .expr(tables)
        .map((name) =>
          r
            .db(this.db)
            .table(name)
            .status()
            .do((status: RDatum<any>) => ({
              name,
              writable: status('status')('ready_for_writes')
            }))
        )
        .run()) as { name: string; writable: boolean }[]
    } catch {
      // Reachable or not: a trivial query tells (a missing table also fails the status query).
      const reachable = await r
        .expr(1)
        .run()
        .then(
          () => true,
          () => false
        )
      return this.report({ reachable, writable: false }, [
        reachable ? `RethinkDB tables of ${this.db} are not ready` : `RethinkDB at ${this.where} cannot be reached`
      ])
    }
    const problems: string[] = []
    const notWritable = statuses.filter((status) => !status.writable).map((status) => status.name)
    if (notWritable.length > 0) problems.push(`RethinkDB tables do not accept writes yet: ${notWritable.join(', ')}`)
    const notLive = this.stores.filter((store) => !store.isWatching).map((store) => store.tableName)
    if (notLive.length > 0) problems.push(`RethinkDB change feeds are re-opening: ${notLive.join(', ')}`)
    return this.report(
      { reachable: true, writable: notWritable.length === 0, ...(this.events ? { feeds: notLive.length === 0 } : {}) },
      problems
    )
  }

  private report(checks: Record<string, boolean>, problems: string[]): StoreHealth {
    return { ready: problems.length === 0 && Object.values(checks).every(Boolean), checks, problems }
  }
}
