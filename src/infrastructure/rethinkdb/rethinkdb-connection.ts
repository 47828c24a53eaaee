import type { R } from 'rethinkdb-ts'
import { BadRequest, Unavailable } from '../../domain/errors/errors.js'
import { silentLogger, type Logger } from '../../domain/logger.js'
import { driverMessage } from './rethinkdb-errors.js'
import { rethinkdbDriver } from './rethinkdb-driver.js'

export interface RethinkDbServer {
  host: string
  port: number
}

export interface RethinkDbAddress {
  /** Every server named in the URL; the pool spreads over them and survives losing some. */
  servers: RethinkDbServer[]
  /** The database named in the URL path; undefined when the path is empty. */
  db?: string
  user?: string
  password?: string
}

export const DEFAULT_RETHINKDB_PORT = 28015

const URL_SHAPE = /^rethinkdb:\/\/(?:([^@/]*)@)?([^/@]+)(?:\/([^/?#]*))?\/?$/

/**
 * Parses `rethinkdb://[user[:password]@]host[:port][,host[:port]…][/db]`. Several hosts name the
 * servers of one cluster: the pool connects to all of them.
 */
export function parseRethinkDbUrl(url: string): RethinkDbAddress {
  const match = URL_SHAPE.exec(url)
  const invalid = () => new BadRequest(`Invalid RethinkDB URL '${url}': expected rethinkdb://host:port/db (or host1:port,host2:port for a cluster)`)
  if (!match) throw invalid()
  const [, credentials, hosts, path] = match
  const servers = hosts!.split(',').map((entry) => parseServer(entry.trim()))
  if (servers.some((server) => server === undefined)) throw invalid()
  const [user, password] = credentials === undefined ? [] : credentials.split(/:(.*)/s, 2)
  const db = path ? decodeURIComponent(path) : ''
  return {
    servers: servers as RethinkDbServer[],
    ...(db ? { db } : {}),
    ...(user ? { user: decodeURIComponent(user) } : {}),
    ...(password ? { password: decodeURIComponent(password) } : {})
  }
}

/** `host`, `host:port`, `[::1]:port`; undefined when it is none of them. */
function parseServer(entry: string): RethinkDbServer | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[\w.-]+)(?::(\d{1,5}))?$/.exec(entry)
  if (!match) return undefined
  const port = match[2] === undefined ? DEFAULT_RETHINKDB_PORT : Number(match[2])
  if (port < 1 || port > 65535) return undefined
  return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port }
}

/** `host:port[,host:port]` for log lines and messages. */
export function describeServers(servers: RethinkDbServer[]): string {
  return servers.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(',')
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
 * itself after an outage (to any server of a cluster that answers); queries made meanwhile fail at
 * once and stores report them as 503.
 *
 * While no server answers it logs, once, "waiting for RethinkDB at host:port (up to N s)" with the
 * driver's reason (connection refused, unknown host…), then keeps trying until `timeoutMs`.
 */
export async function connectRethinkDb(url: string, options: ConnectOptions = {}): Promise<RethinkDbConnection> {
  const address = parseRethinkDbUrl(url)
  const logger = options.logger ?? silentLogger
  const timeoutMs = options.timeoutMs ?? 30_000
  const where = describeServers(address.servers)
  const { r } = rethinkdbDriver()
  const credentials = {
    ...(address.user ? { user: address.user } : {}),
    ...(address.password ? { password: address.password } : {})
  }
  const pool = await r.connectPool({
    servers: address.servers,
    ...(address.db ? { db: address.db } : {}),
    ...credentials,
    // Queries and change feeds share connections (rethinkdb-ts multiplexes); more than the default
    // single connection keep a busy feed from delaying other queries. All of them stay open: the
    // driver closes a connection beyond `buffer` `timeoutGb` (1 h) after it opened, whether or not
    // queries are running on it (rethinkdb-ts 3.0 arms that idle timer only when the connection
    // opens: its 'data'/'query' listeners never fire), which fails them all at once with "The
    // connection was closed before the query could be completed".
    buffer: 10,
    max: 10,
    // Reconnect every 0.5–1 s while a server is away (the driver's default backs off to 64 s, which
    // would keep an instance unavailable long after its database came back).
    timeoutError: 500,
    maxExponent: 1,
    silent: true,
    log: (message: string) => logger.debug('rethinkdb-ts', { message }),
    // Waiting here would reject on the first refused connection; poll below instead, so a server
    // that is still starting (docker compose) gets the whole timeout.
    waitForHealthy: false
  })
  const deadline = Date.now() + timeoutMs
  let announced = false
  while (!pool.isHealthy) {
    if (Date.now() >= deadline || options.signal?.aborted) {
      await pool.drain().catch(() => undefined)
      throw new Unavailable(`Cannot reach RethinkDB at ${where} (waited ${Math.round(timeoutMs / 1000)} s; set RETHINKDB_TIMEOUT to wait longer)`)
    }
    if (!announced && Date.now() > deadline - timeoutMs + 200) {
      announced = true
      const reason = await whyUnreachable(r, address, credentials)
      if (reason !== undefined && !pool.isHealthy) {
        logger.warn(`waiting for RethinkDB at ${where} (up to ${Math.round(timeoutMs / 1000)} s)`, { reason })
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  logger.info('Connected to RethinkDB', { servers: where, db: address.db })
  return {
    r,
    ...(address.db ? { db: address.db } : {}),
    close: () => pool.drain()
  }
}

/**
 * The driver's own reason the first server cannot be reached (refused, unknown host, bad
 * credentials), from one plain connection attempt; undefined when that attempt succeeds.
 */
async function whyUnreachable(r: R, address: RethinkDbAddress, credentials: { user?: string; password?: string }): Promise<string | undefined> {
  const reasons: string[] = []
  for (const server of address.servers) {
    try {
      const connection = await r.connect({ ...server, ...credentials, timeout: 2, silent: true })
      await connection.close().catch(() => undefined)
      return undefined
    } catch (error) {
      reasons.push(`${describeServers([server])}: ${driverMessage(error).split('\n').map((line) => line.trim()).filter(Boolean).join(' ')}`)
    }
  }
  return reasons.join('; ')
}
