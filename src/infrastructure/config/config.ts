import { ConfigError, duration, durationMs, flag, integer, isDuration, oneOf, type Env } from './environment.js'

export { ConfigError, type Env } from './environment.js'

/**
 * The core settings, read once from the environment and validated with messages naming the variable.
 * Settings of one adapter are not here: its module reads them (the RethinkDB store's RETHINKDB_* in
 * src/infrastructure/rethinkdb/rethinkdb-settings.ts), and only when that adapter is chosen.
 */
export interface Config {
  env: 'development' | 'production' | 'test'
  port: number
  host: string
  /**
   * The HTTP engine serving REST and socket.io (HTTP, default `express`): `express`, or an engine module's name
   * (`fastify`); the composition root refuses one no module provides. Every engine answers the same wire.
   */
  http: string
  /**
   * The real-time transport on the HTTP engine's server (REALTIME, default `socketio`); `none` serves
   * REST only: no connections, no live events.
   */
  realtime: string
  /**
   * The store module to load (default `memory`). Any name is read here; the composition root
   * (src/container.ts) refuses one that is not in its registry of store modules.
   */
  store: string
  /** Undefined when AUTH_SECRET is not set (development generates one; production refuses to start). */
  authSecret?: string
  /** Access-token lifetime, a jsonwebtoken duration (default 15m). */
  jwtExpiresIn: string
  /** The same in milliseconds (a number without unit is ms, as jsonwebtoken reads it). */
  jwtExpiresInMs: number
  /** Refresh-token lifetime in ms (REFRESH_TOKEN_EXPIRES_IN, default 30d). */
  refreshTokenExpiresInMs: number
  /** How long a used refresh token may be retried for the same next one, in ms (REFRESH_TOKEN_REUSE_WINDOW, 30s). */
  refreshTokenReuseWindowMs: number
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
  /** Unsent bytes one socket connection may hold; a client that stops reading is disconnected past it. */
  socketMaxBufferedBytes: number
  /**
   * How long a dropped socket connection may stay away and resume where it was, in ms (SOCKET_RECOVERY_WINDOW in
   * seconds, default 120; 0: off).
   */
  socketRecoveryWindowMs: number
  /** Serve GET /openapi.json and the API reference page at /docs. */
  apiDocs: boolean
  /** Live queries over socket.io (LIVE_QUERIES, default true; the module reads LIVE_MAX_WATCHES). */
  liveQueries: boolean
  /**
   * Honour idempotency keys on writes (IDEMPOTENCY, default true): the `Idempotency-Key` header over REST,
   * `$idempotencyKey` in a call's query (README "Retries and idempotency").
   */
  idempotency: boolean
  /** How long a key and its answer are kept, in ms (IDEMPOTENCY_RETENTION, a duration, default 24h). */
  idempotencyRetentionMs: number
  /** Collect metrics and serve them at GET /metrics (METRICS, default true); off: nothing is measured. */
  metrics: boolean
  /** When set, GET /metrics requires `Authorization: Bearer <token>` (METRICS_TOKEN). */
  metricsToken?: string
  /**
   * Server-side sessions (SESSIONS, default true): refresh tokens with rotation, revocation on logout and password
   * change, and failed-login limits. Off: access tokens are stateless JWTs and logins are not limited.
   */
  sessions: boolean
  /**
   * Traces are exported: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set and
   * OTEL_SDK_DISABLED is not true (the tracing module reads and checks the rest of OTEL_*).
   */
  tracing: boolean
}
export const Config = Symbol.for('Config')

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development')
  const config: Config = {
    env: nodeEnv,
    port: integer(env, 'PORT', 3030, 0, 65535),
    host: env.HOST || '127.0.0.1',
    http: env.HTTP || 'express',
    realtime: env.REALTIME || 'socketio',
    store: env.STORE || 'memory',
    authSecret: env.AUTH_SECRET || undefined,
    jwtExpiresIn: env.JWT_EXPIRES_IN || '15m',
    jwtExpiresInMs: 0,
    refreshTokenExpiresInMs: duration(env, 'REFRESH_TOKEN_EXPIRES_IN', '30d'),
    refreshTokenReuseWindowMs: duration(env, 'REFRESH_TOKEN_REUSE_WINDOW', '30s', 'every reuse revokes'),
    loginMaxFailures: integer(env, 'LOGIN_MAX_FAILURES', 10, 0, 1_000_000),
    loginAddressMaxFailures: integer(env, 'LOGIN_MAX_FAILURES_PER_ADDRESS', 50, 1, 1_000_000),
    loginFailureWindowMs: duration(env, 'LOGIN_FAILURE_WINDOW', '15m'),
    loginFreeFailures: integer(env, 'LOGIN_FREE_FAILURES', 3, 0, 1_000_000),
    bcryptRounds: integer(env, 'BCRYPT_ROUNDS', 10, 4, 15),
    corsOrigins: (env.CORS_ORIGINS ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    compression: flag(env, 'COMPRESSION', false),
    requestLog: flag(env, 'REQUEST_LOG', false),
    staticDir: env.STATIC_DIR === '' ? undefined : (env.STATIC_DIR ?? 'public'),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    bodyLimit: env.BODY_LIMIT || '100kb',
    socketMaxMessageSize: integer(env, 'SOCKET_MAX_MESSAGE_SIZE', 1e6, 1024, 2 ** 31 - 1),
    socketMaxConcurrentCalls: integer(env, 'SOCKET_MAX_CONCURRENT_CALLS', 100, 1, 100000),
    socketMaxBufferedBytes: integer(env, 'SOCKET_MAX_BUFFERED_BYTES', 4 * 1024 * 1024, 65536, 2 ** 31 - 1),
    socketRecoveryWindowMs: integer(env, 'SOCKET_RECOVERY_WINDOW', 120, 0, 86400) * 1000,
    apiDocs: flag(env, 'API_DOCS', true),
    liveQueries: flag(env, 'LIVE_QUERIES', true),
    idempotency: flag(env, 'IDEMPOTENCY', true),
    idempotencyRetentionMs: duration(env, 'IDEMPOTENCY_RETENTION', '24h'),
    metrics: flag(env, 'METRICS', true),
    metricsToken: env.METRICS_TOKEN || undefined,
    sessions: flag(env, 'SESSIONS', true),
    tracing:
      !flag(env, 'OTEL_SDK_DISABLED', false) &&
      Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT)
  }
  if (!/^[\w.:[\]-]+$/.test(config.host)) {
    throw new ConfigError(`HOST must be a host name or IP address such as 127.0.0.1 or 0.0.0.0 (got '${config.host}')`)
  }
  const badOrigin = config.corsOrigins.find((origin) => origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin))
  if (badOrigin !== undefined) {
    throw new ConfigError(
      `CORS_ORIGINS must be * or comma-separated origins such as https://app.example.com (got '${badOrigin}')`
    )
  }
  // An unparsable limit would silently mean "no limit" to the body parsers.
  if (!/^\d+(\.\d+)?\s*(b|kb|mb|gb)?$/i.test(config.bodyLimit)) {
    throw new ConfigError(`BODY_LIMIT must be a size such as 100kb or 1mb (got '${config.bodyLimit}')`)
  }
  if (!isDuration(config.jwtExpiresIn)) {
    throw new ConfigError(`JWT_EXPIRES_IN must be a duration such as 1d, 12h or 3600s (got '${config.jwtExpiresIn}')`)
  }
  config.jwtExpiresInMs = durationMs(config.jwtExpiresIn)
  if (config.env === 'production' && !config.authSecret) {
    throw new ConfigError('AUTH_SECRET must be set when NODE_ENV=production')
  }
  if (config.authSecret !== undefined && config.authSecret.length < 16) {
    throw new ConfigError('AUTH_SECRET must be at least 16 characters long')
  }
  // A bearer token is one token68 (RFC 7235): anything else could never be sent back as configured.
  if (config.metricsToken !== undefined && !/^[\w.~+/-]+=*$/.test(config.metricsToken)) {
    throw new ConfigError(
      'METRICS_TOKEN must be a bearer token: letters, digits and - . _ ~ + / (its value is not shown)'
    )
  }
  return config
}
