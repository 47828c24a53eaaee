import { readFileSync } from 'node:fs'
import { ConfigError, integer, type Env } from '../config/environment.js'

/** The PostgreSQL store's own settings, read by its module when STORE=postgres. */
export interface PostgresSettings {
  /**
   * `postgres://[user[:password]@]host[:port]/db[?sslmode=…]` (POSTGRES_URL). It may hold the
   * password: show it only through redactPostgresUrl.
   */
  url: string
  /** The password read from POSTGRES_PASSWORD_FILE (the URL then holds none). */
  password?: string
  /** Connections per instance (POSTGRES_POOL_SIZE, default 10); one more follows the event log. */
  poolSize: number
  /** How long to wait for a connection, and for the event log at startup, in ms (POSTGRES_TIMEOUT in seconds). */
  timeoutMs: number
}
export const PostgresSettings = Symbol.for('PostgresSettings')

/**
 * Reads POSTGRES_URL, POSTGRES_PASSWORD_FILE, POSTGRES_POOL_SIZE and POSTGRES_TIMEOUT. TLS is the
 * URL's business (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`, as libpq reads them). A bad
 * setting stops the start with one line naming its variable, never the password.
 */
export function readPostgresSettings(env: Env): PostgresSettings {
  const url = env.POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/plumage'
  const parsed = parseUrl(url)
  const password = passwordFile(env, parsed)
  return {
    url,
    ...(password !== undefined ? { password } : {}),
    poolSize: integer(env, 'POSTGRES_POOL_SIZE', 10, 1, 1000),
    timeoutMs: integer(env, 'POSTGRES_TIMEOUT', 30, 1, 3600) * 1000
  }
}

/**
 * The URL with its password replaced by `***` (`postgres://app:***@db:5432/app`), for every
 * message and log line that shows it; a `password=` query parameter is hidden too. Works on any string.
 */
export function redactPostgresUrl(url: string): string {
  const start = url.indexOf('://') + 3
  const at = url.lastIndexOf('@')
  const colon = url.indexOf(':', start)
  const hidden = at >= start && colon >= 0 && colon < at ? `${url.slice(0, colon + 1)}***${url.slice(at)}` : url
  return hidden.replace(/([?&]password=)[^&]*/gi, '$1***')
}

function parseUrl(url: string): URL {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new ConfigError(
      `POSTGRES_URL must be a URL such as postgres://user@host:5432/db (got '${redactPostgresUrl(url)}')`
    )
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new ConfigError(`POSTGRES_URL must start with postgres:// or postgresql:// (got '${redactPostgresUrl(url)}')`)
  const sslmode = parsed.searchParams.get('sslmode')
  if (sslmode !== null && !['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'].includes(sslmode))
    throw new ConfigError(
      `POSTGRES_URL sslmode must be disable, prefer, require, verify-ca, verify-full or no-verify (got '${sslmode}')`
    )
  return parsed
}

/**
 * The password of a container secret: the file's contents without the line break editors and
 * `echo` put at its end. The URL must then hold none: two passwords that may differ are refused.
 */
function passwordFile(env: Env, url: URL): string | undefined {
  const path = env.POSTGRES_PASSWORD_FILE
  if (!path) return undefined
  if (url.password !== '' || url.searchParams.has('password'))
    throw new ConfigError(
      'POSTGRES_URL holds a password and POSTGRES_PASSWORD_FILE is set: give the password in one of them only'
    )
  let contents: string
  try {
    contents = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable'
    throw new ConfigError(`POSTGRES_PASSWORD_FILE names a file that cannot be read ('${path}': ${code})`)
  }
  const password = contents.replace(/\r?\n$/, '')
  if (password === '') throw new ConfigError(`POSTGRES_PASSWORD_FILE names an empty file ('${path}')`)
  return password
}
