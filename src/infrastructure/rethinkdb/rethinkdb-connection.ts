import { connect as tlsConnect, type ConnectionOptions } from 'node:tls'
import type { R, RServerConnectionOptions } from 'rethinkdb-ts'
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
  /** One user for every server of a cluster (users are cluster-wide); the driver's default is `admin`. */
  user?: string
  password?: string
}

/**
 * TLS on the driver port (RETHINKDB_TLS_*): the CA that signed the server's certificate (PEM;
 * Node's trusted CAs without it), a client certificate and its key, and the name the server's
 * certificate must carry when it is not the host of the URL.
 */
export interface RethinkDbTls {
  ca?: string
  cert?: string
  key?: string
  servername?: string
}

export const DEFAULT_RETHINKDB_PORT = 28015

const SCHEME = 'rethinkdb://'
const URL_FORM =
  'must look like rethinkdb://[user:password@]host:28015/db, or rethinkdb://host1:28015,host2:28015/db for a cluster'

/**
 * A RethinkDB URL that cannot be used. `problem` completes "the URL …" (so a setting can name its
 * variable); the message shows the URL with its password replaced by `***`.
 */
export class InvalidRethinkDbUrl extends BadRequest {
  constructor(
    readonly redactedUrl: string,
    readonly problem: string
  ) {
    super(`Invalid RethinkDB URL '${redactedUrl}': it ${problem}`)
  }
}

/**
 * Parses `rethinkdb://[user[:password]@]host[:port][,host[:port]…][/db]`. Several hosts name the
 * servers of one cluster: the pool connects to all of them, as the one user. The user and password
 * are percent-encoded (`%40` for `@`, `%25` for `%`); they end at the last `@`, since no host or
 * database name holds one. Not WHATWG's `URL`: a list of hosts is not a valid URL there.
 */
export function parseRethinkDbUrl(url: string): RethinkDbAddress {
  const invalid = (problem = URL_FORM) => new InvalidRethinkDbUrl(redactRethinkDbUrl(url), problem)
  if (!url.startsWith(SCHEME)) throw invalid()
  const rest = url.slice(SCHEME.length)
  const at = rest.lastIndexOf('@')
  const slash = rest.indexOf('/', at + 1)
  const hosts = rest.slice(at + 1, slash < 0 ? undefined : slash)
  const path = slash < 0 ? '' : rest.slice(slash + 1).replace(/\/$/, '')
  const servers = hosts.split(',').map((entry) => parseServer(entry.trim()))
  if (servers.some((server) => server === undefined) || !/^[\w-]*$/.test(path)) throw invalid()
  const credentials = at < 0 ? '' : rest.slice(0, at)
  const colon = credentials.indexOf(':')
  let user: string, password: string
  try {
    user = decodeURIComponent(colon < 0 ? credentials : credentials.slice(0, colon))
    password = colon < 0 ? '' : decodeURIComponent(credentials.slice(colon + 1))
  } catch {
    throw invalid('must percent-encode its user and password (% as %25, @ as %40)')
  }
  return {
    servers: servers as RethinkDbServer[],
    ...(path ? { db: path } : {}),
    ...(user ? { user } : {}),
    ...(password ? { password } : {})
  }
}

/**
 * The URL with its password replaced by `***` (`rethinkdb://app:***@db:28015/app`), for every
 * message and log line that shows it. Works on any string, a malformed URL included.
 */
export function redactRethinkDbUrl(url: string): string {
  const start = url.indexOf('://') + 3
  const at = url.lastIndexOf('@')
  const colon = url.indexOf(':', start)
  if (at < start || colon < 0 || colon > at) return url
  return `${url.slice(0, colon + 1)}***${url.slice(at)}`
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
  /** The password when the URL has none (RETHINKDB_PASSWORD_FILE). */
  password?: string
  /** TLS on the driver port of every server; plain TCP without it. */
  tls?: RethinkDbTls
}

/** How often, while no server answers, one plain connection attempt asks the driver why. */
const DIAGNOSE_EVERY_MS = 2_000

/**
 * Opens the connection pool for `STORE=rethinkdb`. rethinkdb-ts keeps ONE pool on its module-level
 * `r`: connecting again replaces (and drains) the previous pool, so a process connects once, in the
 * composition root, and closes it on shutdown after the stores. Once open, the pool reconnects by
 * itself after an outage (to any server of a cluster that answers); queries made meanwhile fail at
 * once and stores report them as 503.
 *
 * While no server answers it logs, once, "waiting for RethinkDB at host:port (up to N s)" with the
 * driver's reason (connection refused, unknown host…), then keeps trying until `timeoutMs`. A reason
 * that waiting cannot cure — the server refused the user or password, or its certificate failed the
 * TLS check — stops it at once with one line. No message shows the password.
 */
export async function connectRethinkDb(url: string, options: ConnectOptions = {}): Promise<RethinkDbConnection> {
  const address = parseRethinkDbUrl(url)
  const logger = options.logger ?? silentLogger
  const timeoutMs = options.timeoutMs ?? 30_000
  const where = describeServers(address.servers)
  const { r } = rethinkdbDriver()
  const password = address.password ?? options.password
  const credentials = {
    ...(address.user ? { user: address.user } : {}),
    ...(password ? { password } : {})
  }
  const servers = address.servers.map((server) => ({
    ...server,
    ...(options.tls ? { tls: true as const, ...options.tls } : {})
  }))
  const pool = await r.connectPool({
    servers,
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
  const started = Date.now()
  const deadline = started + timeoutMs
  let nextDiagnosis = started + 200
  let announced = false
  while (!pool.isHealthy) {
    if (Date.now() >= deadline || options.signal?.aborted) {
      await pool.drain().catch(() => undefined)
      throw new Unavailable(
        `Cannot reach RethinkDB at ${where} (waited ${Math.round(timeoutMs / 1000)} s; set RETHINKDB_TIMEOUT to wait longer)`
      )
    }
    if (Date.now() >= nextDiagnosis) {
      const problem = await whyUnreachable(r, servers, credentials)
      nextDiagnosis = Date.now() + DIAGNOSE_EVERY_MS
      if (problem?.refusal !== undefined && !pool.isHealthy) {
        await pool.drain().catch(() => undefined)
        throw new Unavailable(refusalMessage(problem.refusal, where, address.user, redactRethinkDbUrl(url)))
      }
      if (problem !== undefined && !announced && !pool.isHealthy) {
        announced = true
        logger.warn(`waiting for RethinkDB at ${where} (up to ${Math.round(timeoutMs / 1000)} s)`, {
          reason: problem.reason
        })
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  logger.info('Connected to RethinkDB', {
    servers: where,
    db: address.db,
    user: address.user ?? 'admin',
    tls: options.tls !== undefined
  })
  return {
    r,
    ...(address.db ? { db: address.db } : {}),
    close: () => pool.drain()
  }
}

/** A refusal waiting cannot cure: the login (user, password) or the TLS handshake (with Node's code). */
interface Refusal {
  kind: 'login' | 'tls'
  /** The driver's or TLS layer's own words. */
  reason: string
  code?: string
}

/** Why no server could be reached: every server's reason, and the first refusal among them, if any. */
interface Unreachable {
  reason: string
  refusal?: Refusal
}

/**
 * The driver's own reason the servers cannot be reached (refused, unknown host, wrong password, a
 * certificate the CA did not sign), from one plain connection attempt to each; undefined as soon
 * as one attempt succeeds.
 */
async function whyUnreachable(
  r: R,
  servers: RServerConnectionOptions[],
  credentials: { user?: string; password?: string }
): Promise<Unreachable | undefined> {
  const reasons: string[] = []
  let refusal: Refusal | undefined
  for (const server of servers) {
    try {
      const connection = await r.connect({ server, ...credentials, timeout: 2, silent: true })
      await connection.close().catch(() => undefined)
      return undefined
    } catch (driverError) {
      const error =
        refusalOf(driverError, '') === undefined && server.tls ? ((await tlsAlert(server)) ?? driverError) : driverError
      const reason = oneLine(driverMessage(error))
      reasons.push(`${describeServers([server as RethinkDbServer])}: ${reason}`)
      refusal ??= refusalOf(error, reason)
    }
  }
  return { reason: reasons.join('; '), ...(refusal ? { refusal } : {}) }
}

/** The first bytes a RethinkDB client sends (the V1_0 protocol's magic number, little-endian). */
const V1_0 = Buffer.from([0xc3, 0xbd, 0xc2, 0x34])

/**
 * In TLS 1.3 a server that wants a client certificate says so only after the handshake, and the
 * driver then reports a bare "The connection was closed". One plain TLS connection that sends
 * RethinkDB's first bytes hears the server's alert: the error, or undefined when none comes.
 */
function tlsAlert(server: RServerConnectionOptions): Promise<Error | undefined> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ ...(server as ConnectionOptions), timeout: 2_000 })
    const done = (error?: Error) => {
      socket.destroy()
      resolve(error)
    }
    socket.once('secureConnect', () => socket.write(V1_0))
    socket.once('error', done)
    socket.once('data', () => done())
    socket.once('close', () => done())
    socket.once('timeout', () => done())
  })
}

/**
 * Node's codes for a certificate that fails verification (an unknown CA, a self-signed or expired
 * certificate, a name that does not match) and for a TLS handshake the server broke off (a client
 * certificate it wanted, a server that does not speak TLS).
 */
const TLS_FAILURE = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|HOSTNAME_MISMATCH|^ERR_TLS_|^ERR_SSL_/

function refusalOf(error: unknown, reason: string): Refusal | undefined {
  const { isRethinkDBError, RethinkDBErrorType } = rethinkdbDriver()
  if (isRethinkDBError(error) && error.type === RethinkDBErrorType.AUTH) return { kind: 'login', reason }
  const { code, reason: openSsl } = (error ?? {}) as { code?: unknown; reason?: unknown }
  if (typeof code !== 'string' || !TLS_FAILURE.test(code)) return undefined
  // OpenSSL's errors carry a short `reason` ("wrong version number") beside a message full of internals.
  return { kind: 'tls', reason: typeof openSsl === 'string' ? openSsl : reason, code }
}

function refusalMessage(
  { kind, reason, code = '' }: Refusal,
  where: string,
  user = 'admin',
  redactedUrl: string
): string {
  if (kind === 'login') {
    return `RethinkDB at ${where} refused the login of user '${user}': ${reason} (check the user and password of RETHINKDB_URL ${redactedUrl}, or RETHINKDB_PASSWORD_FILE)`
  }
  return `RethinkDB at ${where} failed the TLS check: ${reason} (${code}); ${tlsHint(code)}`
}

/** What to change for each kind of TLS failure. */
function tlsHint(code: string): string {
  if (/ALTNAME|HOSTNAME/.test(code))
    return "the server's certificate does not name the host of RETHINKDB_URL: set RETHINKDB_TLS_SERVERNAME to a name it carries"
  if (/CERTIFICATE_REQUIRED|ALERT_(BAD|UNKNOWN)_CERTIFICATE|ALERT_CERTIFICATE/.test(code))
    return 'the server wants a client certificate it trusts: set RETHINKDB_TLS_CERT and RETHINKDB_TLS_KEY'
  if (code.startsWith('ERR_SSL_'))
    return 'does the server serve TLS on its driver port (--driver-tls-key, --driver-tls-cert)?'
  return "RETHINKDB_TLS_CA must be the CA that signed the server's certificate"
}

function oneLine(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ')
}
