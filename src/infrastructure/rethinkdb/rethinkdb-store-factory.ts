import { silentLogger, type Logger } from '../../domain/logger.js'
import type { Data } from '../../domain/service/service.js'
import type { Store } from '../../domain/store/store.js'
import type { StoreFactory, StoreOptions } from '../../domain/store/store-factory.js'
import { rethinkdbDriver } from './rethinkdb-driver.js'
import { connectRethinkDb, parseRethinkDbUrl, type RethinkDbConnection } from './rethinkdb-connection.js'
import { RethinkDbStore } from './rethinkdb-store.js'

export interface RethinkDbStoreFactoryOptions {
  logger?: Logger
  /** Publish table changefeeds (default true). */
  watch?: boolean
  /** How long setup() waits for a first connection (default 30 s). */
  timeoutMs?: number
}

/**
 * `STORE=rethinkdb`: every collection is a table of the database named in RETHINKDB_URL. The factory
 * owns the one rethinkdb-ts pool: it starts connecting when constructed (the composition root is
 * synchronous), each store's setup() waits for it and creates its table, and close() stops the
 * stores' feeds before draining the pool.
 */
export class RethinkDbStoreFactory implements StoreFactory {
  private readonly connection: Promise<RethinkDbConnection>
  private readonly db?: string
  private readonly logger: Logger
  private readonly stores: RethinkDbStore[] = []
  private readonly stopping = new AbortController()

  constructor(url: string, private readonly options: RethinkDbStoreFactoryOptions = {}) {
    const { db } = parseRethinkDbUrl(url)
    if (db !== undefined) this.db = db
    this.logger = options.logger ?? silentLogger
    this.connection = connectRethinkDb(url, { logger: this.logger, timeoutMs: options.timeoutMs, signal: this.stopping.signal })
    // Reported by the first setup() that awaits it; never an unhandled rejection.
    this.connection.catch(() => undefined)
  }

  create<T extends Data = Data>(name: string, options: StoreOptions = {}): Store<T> {
    const store = new RethinkDbStore({
      r: rethinkdbDriver().r,
      table: name,
      ...(this.db !== undefined ? { db: this.db } : {}),
      ...(options.id !== undefined ? { id: options.id } : {}),
      watch: this.options.watch ?? true,
      logger: this.logger,
      connected: this.connection
    })
    this.stores.push(store)
    return store as unknown as Store<T>
  }

  /**
   * A trivial query on the pool, bounded by `timeoutMs` (default 2 s): a health probe must answer
   * quickly even while the pool is still connecting or the server hangs.
   */
  async ping(timeoutMs = 2000): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timedOut = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs) })
    const answered = this.connection
      .then((connection) => connection.r.expr(1).run())
      .then((value) => value === 1, () => false)
    try {
      return await Promise.race([answered, timedOut])
    } finally {
      clearTimeout(timer)
    }
  }

  async close(): Promise<void> {
    this.stopping.abort()
    await Promise.all(this.stores.map((store) => store.close()))
    const connection = await this.connection.catch(() => undefined)
    await connection?.close()
  }
}
