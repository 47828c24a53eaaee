/** Typed configuration read once from the environment, validated with messages naming the variable. */
export interface Config {
  env: 'development' | 'production' | 'test'
  port: number
  host: string
  store: 'memory' | 'rethinkdb'
  /** `rethinkdb://host:port/db`, or `rethinkdb://h1:port,h2:port,h3:port/db` for a cluster. */
  rethinkdbUrl: string
  /** How long to wait for RethinkDB at startup, and for the change feeds, in ms (RETHINKDB_TIMEOUT in seconds). */
  rethinkdbTimeoutMs: number
  /** Replicas and shards of every table (a cluster); undefined keeps what the tables have. */
  rethinkdbReplicas?: number
  rethinkdbShards?: number
  /** Publish writes made directly in the database too (default true). */
  rethinkdbDirectWrites: boolean
  /** Undefined when AUTH_SECRET is not set (development generates one; production refuses to start). */
  authSecret?: string
  /** Access-token lifetime, a jsonwebtoken duration (default 15m). */
  jwtExpiresIn: string
  /** The same in milliseconds (a number without unit is ms, as jsonwebtoken reads it). */
  jwtExpiresInMs: number
  /** Refresh-token lifetime in ms (REFRESH_TOKEN_EXPIRES_IN, default 30d). */
  refreshTokenExpiresInMs: number
  /** Failed logins per account and per client address within the window (LOGIN_MAX_FAILURES, default 10; 0: off). */
  loginMaxFailures: number
  /** The window of failed logins in ms (LOGIN_FAILURE_WINDOW, default 15m). */
  loginFailureWindowMs: number
  /** Failed logins per client address within the window (LOGIN_MAX_FAILURES_PER_ADDRESS, default 50). */
  loginAddressMaxFailures: number
  /** Failures before each further one doubles the wait, from 1 s (LOGIN_FREE_FAILURES, default 3). */
  loginFreeFailures: number
  bcryptRounds: number
  corsOrigins: string[]
  compression: boolean
  requestLog: boolean
  staticDir?: string
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  bodyLimit: string
  /** Largest socket message in bytes; a bigger one closes the connection. */
  socketMaxMessageSize: number
  /** Calls one socket connection may have in flight; more are answered with 429. */
  socketMaxConcurrentCalls: number
  /** Serve GET /openapi.json and the API reference page at /docs. */
  apiDocs: boolean
}
export const Config = Symbol.for('Config')

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

type Env = Record<string, string | undefined>

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development')
  const config: Config = {
    env: nodeEnv,
    port: integer(env, 'PORT', 3030, 0, 65535),
    host: env.HOST || '127.0.0.1',
    store: oneOf(env, 'STORE', ['memory', 'rethinkdb'] as const, 'memory'),
    rethinkdbUrl: env.RETHINKDB_URL || 'rethinkdb://127.0.0.1:28015/plumage',
    rethinkdbTimeoutMs: integer(env, 'RETHINKDB_TIMEOUT', 30, 1, 3600) * 1000,
    rethinkdbReplicas: optionalInteger(env, 'RETHINKDB_REPLICAS', 1, 64),
    rethinkdbShards: optionalInteger(env, 'RETHINKDB_SHARDS', 1, 64),
    rethinkdbDirectWrites: flag(env, 'RETHINKDB_DIRECT_WRITES', true),
    authSecret: env.AUTH_SECRET || undefined,
    jwtExpiresIn: env.JWT_EXPIRES_IN || '15m',
    jwtExpiresInMs: 0,
    refreshTokenExpiresInMs: duration(env, 'REFRESH_TOKEN_EXPIRES_IN', '30d'),
    loginMaxFailures: integer(env, 'LOGIN_MAX_FAILURES', 10, 0, 1_000_000),
    loginAddressMaxFailures: integer(env, 'LOGIN_MAX_FAILURES_PER_ADDRESS', 50, 1, 1_000_000),
    loginFailureWindowMs: duration(env, 'LOGIN_FAILURE_WINDOW', '15m'),
    loginFreeFailures: integer(env, 'LOGIN_FREE_FAILURES', 3, 0, 1_000_000),
    bcryptRounds: integer(env, 'BCRYPT_ROUNDS', 10, 4, 15),
    corsOrigins: (env.CORS_ORIGINS ?? '').split(',').map((origin) => origin.trim()).filter(Boolean),
    compression: flag(env, 'COMPRESSION', false),
    requestLog: flag(env, 'REQUEST_LOG', false),
    staticDir: env.STATIC_DIR === '' ? undefined : env.STATIC_DIR ?? 'public',
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    bodyLimit: env.BODY_LIMIT || '100kb',
    socketMaxMessageSize: integer(env, 'SOCKET_MAX_MESSAGE_SIZE', 1e6, 1024, 2 ** 31 - 1),
    socketMaxConcurrentCalls: integer(env, 'SOCKET_MAX_CONCURRENT_CALLS', 100, 1, 100000),
    apiDocs: flag(env, 'API_DOCS', true)
  }
  if (!/^[\w.:[\]-]+$/.test(config.host)) {
    throw new ConfigError(`HOST must be a host name or IP address such as 127.0.0.1 or 0.0.0.0 (got '${config.host}')`)
  }
  const badOrigin = config.corsOrigins.find((origin) => origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin))
  if (badOrigin !== undefined) {
    throw new ConfigError(`CORS_ORIGINS must be * or comma-separated origins such as https://app.example.com (got '${badOrigin}')`)
  }
  // An unparsable limit would silently mean "no limit" to the body parsers.
  if (!/^\d+(\.\d+)?\s*(b|kb|mb|gb)?$/i.test(config.bodyLimit)) {
    throw new ConfigError(`BODY_LIMIT must be a size such as 100kb or 1mb (got '${config.bodyLimit}')`)
  }
  if (!/^\d+\s*(ms|s|m|h|d|w|y)?$/.test(config.jwtExpiresIn)) {
    throw new ConfigError(`JWT_EXPIRES_IN must be a duration such as 1d, 12h or 3600s (got '${config.jwtExpiresIn}')`)
  }
  config.jwtExpiresInMs = durationMs(config.jwtExpiresIn)
  if (config.store === 'rethinkdb' && !/^rethinkdb:\/\/([\w.-]+(:\d{1,5})?)(,[\w.-]+(:\d{1,5})?)*(\/\w*)?$/.test(config.rethinkdbUrl)) {
    throw new ConfigError(`RETHINKDB_URL must look like rethinkdb://host:28015/db, or rethinkdb://host1:28015,host2:28015/db for a cluster (got '${config.rethinkdbUrl}')`)
  }
  if (config.env === 'production' && !config.authSecret) {
    throw new ConfigError('AUTH_SECRET must be set when NODE_ENV=production')
  }
  if (config.authSecret !== undefined && config.authSecret.length < 16) {
    throw new ConfigError('AUTH_SECRET must be at least 16 characters long')
  }
  return config
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got '${raw}')`)
  }
  return value
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_557_600_000 }

/** `15m`, `30d`, `3600s` in ms; a bare number is ms (as jsonwebtoken reads a string without unit). */
function durationMs(value: string): number {
  const [, amount, unit = 'ms'] = /^(\d+)\s*(ms|s|m|h|d|w|y)?$/.exec(value)!
  return Number(amount) * UNIT_MS[unit]!
}

function duration(env: Env, name: string, fallback: string): number {
  const raw = env[name] || fallback
  if (!/^\d+\s*(ms|s|m|h|d|w|y)?$/.test(raw) || durationMs(raw) <= 0) {
    throw new ConfigError(`${name} must be a duration such as 30d, 12h or 900s (got '${raw}')`)
  }
  return durationMs(raw)
}

function optionalInteger(env: Env, name: string, min: number, max: number): number | undefined {
  return env[name] === undefined || env[name] === '' ? undefined : integer(env, name, min, min, max)
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false
  throw new ConfigError(`${name} must be true or false (got '${raw}')`)
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got '${raw}')`)
  }
  return raw as T
}
