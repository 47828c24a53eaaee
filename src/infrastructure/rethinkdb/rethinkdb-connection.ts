import type { R } from 'rethinkdb-ts'
import { BadRequest, Unavailable } from '../../domain/errors/errors.js'
import { silentLogger, type Logger } from '../../domain/logger.js'
import { rethinkdbDriver } from './rethinkdb-driver.js'

export interface RethinkDbAddress {
  host: string
  port: number
  /** The database named in the URL path; undefined when the path is empty. */
  db?: string
  user?: string
  password?: string
}

export const DEFAULT_RETHINKDB_PORT = 28015

/** Parses `rethinkdb://[user[:password]@]host[:port][/db]`. */
export function parseRethinkDbUrl(url: string): RethinkDbAddress {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new BadRequest(`Invalid RethinkDB URL '${url}': expected rethinkdb://host:port/db`)
  }
  if (parsed.protocol !== 'rethinkdb:' || !parsed.hostname) {
    throw new BadRequest(`Invalid RethinkDB URL '${url}': expected rethinkdb://host:port/db`)
  }
  const db = decodeURIComponent(parsed.pathname.replace(/^\/+/, '').replace(/\/+$/, ''))
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port ? Number(parsed.port) : DEFAULT_RETHINKDB_PORT,
    ...(db ? { db } : {}),
    ...(parsed.username ? { user: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {})
  }
}

export interface RethinkDbConnection {
  /** The rethinkdb-ts `r`, with its connection pool: give it to every RethinkDbStore. */
  r: R
  db?: string
  /** Drains the pool. The connection's creator owns the pool; stores never close it. */
  close(): Promise<void>
}

export interface ConnectOptions {
  /** How long to wait for a first connection (a database container may still be starting). */
  timeoutMs?: number
  logger?: Logger
  /** Stops waiting (and drains the pool) when the app shuts down before the server ever answered. */
  signal?: AbortSignal
}

/**
 * Opens the connection pool for `STORE=rethinkdb`. rethinkdb-ts keeps ONE pool on its module-level
 * `r`: connecting again replaces (and drains) the previous pool, so a process connects once, in the
 * composition root, and closes it on shutdown after the stores. Once open, the pool reconnects by
 * itself after an outage; queries made meanwhile fail at once and stores report them as 503.
 */
export async function connectRethinkDb(url: string, options: ConnectOptions = {}): Promise<RethinkDbConnection> {
  const address = parseRethinkDbUrl(url)
  const logger = options.logger ?? silentLogger
  const { r } = rethinkdbDriver()
  const pool = await r.connectPool({
    servers: [{ host: address.host, port: address.port }],
    ...(address.db ? { db: address.db } : {}),
    ...(address.user ? { user: address.user } : {}),
    ...(address.password ? { password: address.password } : {}),
    // Queries and change feeds share connections (rethinkdb-ts multiplexes); a few more than the
    // default single connection keep a busy feed from delaying other queries.
    buffer: 2,
    max: 10,
    silent: true,
    log: (message: string) => logger.debug('rethinkdb-ts', { message }),
    // Waiting here would reject on the first refused connection; poll below instead, so a server
    // that is still starting (docker compose) gets the whole timeout.
    waitForHealthy: false
  })
  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  while (!pool.isHealthy) {
    if (Date.now() >= deadline || options.signal?.aborted) {
      await pool.drain().catch(() => undefined)
      throw new Unavailable(`Cannot reach RethinkDB at ${address.host}:${address.port}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  logger.info('Connected to RethinkDB', { host: address.host, port: address.port, db: address.db })
  return {
    r,
    ...(address.db ? { db: address.db } : {}),
    close: () => pool.drain()
  }
}
