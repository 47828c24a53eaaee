import { readFileSync } from 'node:fs'
import { createSecureContext, type SecureContextOptions } from 'node:tls'
import { ConfigError, flag, integer, optionalInteger, type Env } from '../config/environment.js'
import {
  InvalidRethinkDbUrl,
  parseRethinkDbUrl,
  type RethinkDbAddress,
  type RethinkDbTls
} from './rethinkdb-connection.js'

/** The RethinkDB store's own settings, read by its module when STORE=rethinkdb. */
export interface RethinkDbSettings {
  /**
   * `rethinkdb://[user:password@]host:port/db`, or `rethinkdb://h1:port,h2:port,h3:port/db` for a
   * cluster (RETHINKDB_URL). It may hold the password: show it only through redactRethinkDbUrl.
   */
  url: string
  /** The database named in the URL (`test` when the URL names none). */
  db: string
  /** The password read from RETHINKDB_PASSWORD_FILE (the URL then holds none). */
  password?: string
  /** How long to wait for RethinkDB at startup, and for the change feeds, in ms (RETHINKDB_TIMEOUT in seconds). */
  timeoutMs: number
  /** Replicas and shards of every table (a cluster); undefined keeps what the tables have. */
  replicas?: number
  shards?: number
  /** Publish writes made directly in the database too (RETHINKDB_DIRECT_WRITES, default true). */
  directWrites: boolean
  /** TLS on the driver port (RETHINKDB_TLS_*), with the files' PEM contents read at startup. */
  tls?: RethinkDbTls
}
export const RethinkDbSettings = Symbol.for('RethinkDbSettings')

/**
 * Reads RETHINKDB_URL, RETHINKDB_PASSWORD_FILE, RETHINKDB_TIMEOUT, RETHINKDB_REPLICAS,
 * RETHINKDB_SHARDS, RETHINKDB_DIRECT_WRITES and RETHINKDB_TLS_*. Files are read here, so a missing
 * or unreadable one stops the start with one line naming its variable (never its contents).
 */
export function readRethinkDbSettings(env: Env): RethinkDbSettings {
  const url = env.RETHINKDB_URL || 'rethinkdb://127.0.0.1:28015/plumage'
  const address = parseUrl(url)
  const password = passwordFile(env, address)
  const tls = readTls(env)
  const replicas = optionalInteger(env, 'RETHINKDB_REPLICAS', 1, 64)
  const shards = optionalInteger(env, 'RETHINKDB_SHARDS', 1, 64)
  return {
    url,
    db: address.db ?? 'test',
    ...(password !== undefined ? { password } : {}),
    timeoutMs: integer(env, 'RETHINKDB_TIMEOUT', 30, 1, 3600) * 1000,
    ...(replicas !== undefined ? { replicas } : {}),
    ...(shards !== undefined ? { shards } : {}),
    directWrites: flag(env, 'RETHINKDB_DIRECT_WRITES', true),
    ...(tls ? { tls } : {})
  }
}

function parseUrl(url: string): RethinkDbAddress {
  try {
    return parseRethinkDbUrl(url)
  } catch (error) {
    if (!(error instanceof InvalidRethinkDbUrl)) throw error
    throw new ConfigError(`RETHINKDB_URL ${error.problem} (got '${error.redactedUrl}')`)
  }
}

/**
 * The password of a container secret: the file's contents without the line break editors and
 * `echo` put at its end. The URL must then hold none: two passwords that may differ are refused
 * rather than one silently winning.
 */
function passwordFile(env: Env, address: RethinkDbAddress): string | undefined {
  const path = env.RETHINKDB_PASSWORD_FILE
  if (!path) return undefined
  if (address.password !== undefined) {
    throw new ConfigError(
      'RETHINKDB_URL holds a password and RETHINKDB_PASSWORD_FILE is set: give the password in one of them only'
    )
  }
  const password = readSetting('RETHINKDB_PASSWORD_FILE', path).replace(/\r?\n$/, '')
  if (password === '') throw new ConfigError(`RETHINKDB_PASSWORD_FILE names an empty file ('${path}')`)
  return password
}

/**
 * TLS is on as soon as one RETHINKDB_TLS_* is set; without RETHINKDB_TLS_CA, Node's trusted CAs
 * check the server's certificate.
 */
function readTls(env: Env): RethinkDbTls | undefined {
  const [ca, cert, key, servername] = [
    env.RETHINKDB_TLS_CA,
    env.RETHINKDB_TLS_CERT,
    env.RETHINKDB_TLS_KEY,
    env.RETHINKDB_TLS_SERVERNAME
  ]
  if (!ca && !cert && !key && !servername) return undefined
  if (!cert !== !key)
    throw new ConfigError(
      'RETHINKDB_TLS_CERT and RETHINKDB_TLS_KEY go together: set both (a client certificate and its key) or neither'
    )
  const tls = {
    ...(ca ? { ca: readSetting('RETHINKDB_TLS_CA', ca) } : {}),
    ...(cert && key
      ? { cert: readSetting('RETHINKDB_TLS_CERT', cert), key: readSetting('RETHINKDB_TLS_KEY', key) }
      : {}),
    ...(servername ? { servername } : {})
  }
  // Node takes a CA file without any certificate silently (and then trusts nothing); a bad client
  // certificate or key would only fail at the first connection.
  if (tls.ca !== undefined)
    checkPem(
      'RETHINKDB_TLS_CA must name a PEM certificate',
      { ca: tls.ca },
      tls.ca.includes('-----BEGIN CERTIFICATE-----')
    )
  if (tls.cert !== undefined)
    checkPem('RETHINKDB_TLS_CERT and RETHINKDB_TLS_KEY must name a PEM certificate and its private key', {
      cert: tls.cert,
      key: tls.key
    })
  return tls
}

function checkPem(requirement: string, pem: SecureContextOptions, looksRight = true): void {
  try {
    if (!looksRight) throw new Error('no certificate in the file')
    createSecureContext(pem)
  } catch (error) {
    throw new ConfigError(`${requirement} (${(error as Error).message})`)
  }
}

/** A file a setting names, as text; one line naming the variable and the path when it cannot be read. */
function readSetting(name: string, path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable'
    throw new ConfigError(`${name} names a file that cannot be read ('${path}': ${code})`)
  }
}
