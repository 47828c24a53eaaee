import { Container, ContainerModule } from 'inversify'
import { existsSync, readFileSync } from 'node:fs'
import type { Server as HttpServer } from 'node:http'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { App } from './application/app.js'
import { LoginThrottle, LoginThrottleSettings } from './application/authentication/login-throttle.js'
import { Sessions, SessionsSettings } from './application/authentication/sessions.js'
import { LoginAttempts } from './domain/auth/login-attempts.js'
import { PasswordHasher } from './domain/auth/password-hasher.js'
import { SessionStore } from './domain/auth/session-store.js'
import { TokenService } from './domain/auth/token-service.js'
import { Clock } from './domain/clock.js'
import { Logger } from './domain/logger.js'
import { Metrics } from './domain/metrics.js'
import { ConnectionSessions } from './domain/realtime/connection-sessions.js'
import { EventHistory } from './domain/realtime/event-history.js'
import { historyRetentionMs, RecoverySettings } from './domain/realtime/recovery-settings.js'
import { SchemaValidator } from './domain/schema/schema-validator.js'
import { StoreFactory } from './domain/store/store-factory.js'
import { noTracer, Tracer } from './domain/tracing.js'
import { UniqueKeys } from './domain/unique-keys.js'
import { bcryptModule } from './infrastructure/auth/bcrypt-module.js'
import { cryptoSecretTokensModule } from './infrastructure/auth/crypto-secret-tokens-module.js'
import { jsonWebTokenModule } from './infrastructure/auth/jsonwebtoken-module.js'
import { systemClockModule } from './infrastructure/clock/system-clock-module.js'
import { Config, ConfigError, type Env } from './infrastructure/config/config.js'
import type { StoreModule } from './infrastructure/config/store-module.js'
import { pinoModule } from './infrastructure/logging/pino-module.js'
import { PinoLogger } from './infrastructure/logging/pino-logger.js'
import { InMemoryConnectionSessions } from './infrastructure/memory/in-memory-connection-sessions.js'
import { InMemoryEventHistory } from './infrastructure/store-commons/index.js'
import { InMemoryLoginAttempts } from './infrastructure/memory/in-memory-login-attempts.js'
import { InMemorySessionStore } from './infrastructure/memory/in-memory-session-store.js'
import { InMemoryUniqueKeys } from './infrastructure/memory/in-memory-unique-keys.js'
import { memoryStoreModule } from './infrastructure/memory/memory-module.js'
import { MeasuredStoreFactory } from './infrastructure/metrics/measured-store.js'
import { metricsModule } from './infrastructure/metrics/metrics-module.js'
import { postgresStoreModule } from './infrastructure/postgres/postgres-module.js'
import { rethinkDbStoreModule } from './infrastructure/rethinkdb/rethinkdb-module.js'
import { ajvModule } from './infrastructure/schema/ajv-module.js'
import { tracedStoreFactory } from './infrastructure/tracing/traced-store-factory.js'
import { fastifyEngine } from './interfaces/fastify/fastify-app.js'
import type { HttpAppOptions, HttpEngine } from './interfaces/http/http-engine.js'
import { expressEngine } from './interfaces/rest/rest-app.js'
import type {
  RealtimeOptions,
  RealtimeTransport,
  RealtimeTransportFactory
} from './interfaces/realtime/realtime-transport.js'
import { socketIoTransport } from './interfaces/socketio/socketio-transport.js'
import { createReferenceApp } from './reference-app.js'

/**
 * The stores STORE can name. Adding one is a folder under src/infrastructure with its adapters and a
 * StoreModule (which reads the store's own settings), and one line here.
 */
export const storeModules: Readonly<Record<string, StoreModule>> = {
  memory: memoryStoreModule,
  rethinkdb: rethinkDbStoreModule,
  postgres: postgresStoreModule
}

/** The adapters that do not depend on the store: the same whatever STORE says. */
const adapterModules: readonly ContainerModule[] = [
  pinoModule,
  systemClockModule,
  metricsModule,
  ajvModule,
  bcryptModule,
  jsonWebTokenModule,
  cryptoSecretTokensModule
]

export interface ContainerOptions {
  /** The registry STORE chooses from (default `storeModules`). */
  storeModules?: Readonly<Record<string, StoreModule>>
  /** Where the chosen store module reads its own settings (default process.env). */
  env?: Env
  /** Replace an adapter: tests log silently, move time by hand, or share sessions between two apps. */
  logger?: Logger
  clock?: Clock
  sessions?: SessionStore
  attempts?: LoginAttempts
  /** The OpenTelemetry tracer when tracing is on (src/main.ts starts it); default `noTracer`. */
  tracer?: Tracer
}

/**
 * The composition root: the only place that knows every adapter. It loads the store module that
 * STORE names and the other adapters' modules, binds the application's pieces, and applies the
 * overrides. Nothing is constructed here: `container.get(App)` builds what the app needs, once.
 */
export function buildContainer(config: Config, options: ContainerOptions = {}): Container {
  const stores = options.storeModules ?? storeModules
  const storeModule = Object.hasOwn(stores, config.store) ? stores[config.store] : undefined
  if (!storeModule)
    throw new ConfigError(`STORE must be one of ${Object.keys(stores).join(', ')} (got '${config.store}')`)
  const container = new Container()
  container.bind<Config>(Config).toConstantValue(config)
  const tracer = options.tracer ?? noTracer
  container.bind<Tracer>(Tracer).toConstantValue(tracer)
  // Traced, every store query is a span; untraced, stores are used as they are.
  if (tracer.enabled)
    container.onActivation<StoreFactory>(StoreFactory, (_context, stores) =>
      tracedStoreFactory(stores, tracer, config.store)
    )
  container.load(...adapterModules, storeModule(options.env ?? process.env), applicationModule)
  if (options.logger) container.rebind<Logger>(Logger).toConstantValue(options.logger)
  if (options.clock) container.rebind<Clock>(Clock).toConstantValue(options.clock)
  keepInProcess(container, config.store, options)
  return container
}

/** The application's pieces with constructor dependencies, and the reference app over the ports. */
const applicationModule = new ContainerModule(({ bind }) => {
  bind<SessionsSettings>(SessionsSettings).toResolvedValue(
    (config: Config) => ({
      accessTokenTtl: config.jwtExpiresInMs,
      refreshTokenTtl: config.refreshTokenExpiresInMs
    }),
    [Config]
  )
  bind(Sessions).toSelf().inSingletonScope()
  bind<LoginThrottleSettings>(LoginThrottleSettings).toResolvedValue(
    (config: Config) => ({
      maxFailures: config.loginMaxFailures,
      addressMaxFailures: config.loginAddressMaxFailures,
      window: config.loginFailureWindowMs,
      freeFailures: config.loginFreeFailures
    }),
    [Config]
  )
  bind(LoginThrottle).toSelf().inSingletonScope()
  bind<RecoverySettings>(RecoverySettings).toResolvedValue(
    (config: Config) => ({ windowMs: config.socketRecoveryWindowMs }),
    [Config]
  )
  // The services' stores are timed (db_client_operation_duration_seconds) when metrics are on.
  bind<App>(App)
    .toResolvedValue(
      (
        config: Config,
        metrics: Metrics,
        stores: StoreFactory,
        validator: SchemaValidator,
        uniqueKeys: UniqueKeys,
        clock: Clock,
        hasher: PasswordHasher,
        tokens: TokenService,
        sessions: Sessions,
        throttle: LoginThrottle,
        tracer: Tracer,
        recovery: RecoverySettings,
        history: EventHistory,
        connections: ConnectionSessions
      ) =>
        createReferenceApp({
          stores: metrics.enabled ? new MeasuredStoreFactory(stores, metrics, config.store) : stores,
          validator,
          uniqueKeys,
          clock,
          metrics,
          tracer,
          authentication: { hasher, tokens, clock, sessions, throttle },
          ...(recovery.windowMs > 0 ? { recovery: { history, sessions: connections } } : {})
        }),
      [
        Config,
        Metrics,
        StoreFactory,
        SchemaValidator,
        UniqueKeys,
        Clock,
        PasswordHasher,
        TokenService,
        Sessions,
        LoginThrottle,
        Tracer,
        RecoverySettings,
        EventHistory,
        ConnectionSessions
      ]
    )
    .inSingletonScope()
})

/**
 * A store module that binds only StoreFactory still runs: unique keys, sessions and login counters
 * are then kept in this process, with a warning (they hold for one instance only). Shared stores
 * given as options replace whatever the module bound.
 */
function keepInProcess(container: Container, store: string, options: ContainerOptions): void {
  const logger = () => container.get<Logger>(Logger)
  if (!container.isBound(UniqueKeys)) {
    logger().warn(
      `No unique keys adapter is registered for STORE=${store}: unique fields are enforced in this process only`
    )
    container.bind<UniqueKeys>(UniqueKeys).to(InMemoryUniqueKeys).inSingletonScope()
  }
  if (options.sessions) container.rebind<SessionStore>(SessionStore).toConstantValue(options.sessions)
  if (options.attempts) container.rebind<LoginAttempts>(LoginAttempts).toConstantValue(options.attempts)
  keepRecoveryInProcess(container, store, logger)
  if (container.isBound(SessionStore) && container.isBound(LoginAttempts)) return
  logger().warn(
    `No session adapter is registered for STORE=${store}: sessions and login limits are kept in this process only`
  )
  if (!container.isBound(SessionStore))
    container.bind<SessionStore>(SessionStore).to(InMemorySessionStore).inSingletonScope()
  if (!container.isBound(LoginAttempts))
    container.bind<LoginAttempts>(LoginAttempts).to(InMemoryLoginAttempts).inSingletonScope()
}

/**
 * The event history and connection sessions of socket.io connection state recovery, in this
 * process unless the store module keeps them where every instance reads them. In memory they hold
 * for one instance: a client resumes on the instance it was connected to.
 */
function keepRecoveryInProcess(container: Container, store: string, logger: () => Logger): void {
  if (container.isBound(EventHistory) && container.isBound(ConnectionSessions)) return
  const settings = () => container.get<RecoverySettings>(RecoverySettings)
  if (store !== 'memory' && settings().windowMs > 0) {
    logger().warn(
      `No connection recovery adapter is registered for STORE=${store}: a dropped socket connection resumes only on the instance it was connected to`
    )
  }
  if (!container.isBound(EventHistory)) {
    container
      .bind<EventHistory>(EventHistory)
      .toResolvedValue(
        (clock: Clock, { windowMs }: RecoverySettings) => new InMemoryEventHistory(clock, historyRetentionMs(windowMs)),
        [Clock, RecoverySettings]
      )
      .inSingletonScope()
  }
  if (!container.isBound(ConnectionSessions)) {
    container
      .bind<ConnectionSessions>(ConnectionSessions)
      .toResolvedValue(
        (clock: Clock, { windowMs }: RecoverySettings) => new InMemoryConnectionSessions(clock, windowMs),
        [Clock, RecoverySettings]
      )
      .inSingletonScope()
  }
}

/**
 * The HTTP layer's settings from config; request logs go through the app's pino when it has one.
 * With the store factory, `GET /health` reports whether the store answers; with enabled metrics,
 * requests are measured and `GET /metrics` serves them (behind METRICS_TOKEN when set).
 */
export function restAppOptions(
  config: Config,
  logger: Logger,
  stores?: StoreFactory,
  metrics?: Metrics
): HttpAppOptions {
  return {
    logger,
    ...(stores ? { health: { version: packageVersion(), check: () => stores.health() } } : {}),
    ...(metrics?.enabled
      ? { metrics: { port: metrics, ...(config.metricsToken ? { token: config.metricsToken } : {}) } }
      : {}),
    bodyLimit: config.bodyLimit,
    ...(config.apiDocs
      ? { apiDocs: { title: 'plumage', version: packageVersion(), description: API_DESCRIPTION } }
      : {}),
    corsOrigins: config.corsOrigins,
    compression: config.compression,
    staticDir: config.staticDir,
    requestLog: config.requestLog && (logger instanceof PinoLogger ? logger.pino : true)
  }
}

const API_DESCRIPTION =
  "The reference chat: sign up with POST /users, log in with POST /authentication, then send the accessToken as a bearer token. Errors use Feathers' JSON shape."

/** The version in package.json, found from this file (src/ under jest, dist/ when built). */
function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json')
    if (existsSync(file))
      return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version ?? 'unknown')
  }
  return 'unknown'
}

/**
 * The HTTP engines HTTP can name (src/interfaces/rest: express, src/interfaces/fastify): the same wire,
 * the same options. Adding one is a folder under src/interfaces with an HttpEngine, and one line here.
 */
export const httpEngines: Readonly<Record<Config['http'], (app: App, options: HttpAppOptions) => HttpEngine>> = {
  express: expressEngine,
  fastify: fastifyEngine
}

/**
 * The real-time transports REALTIME can name (src/interfaces/socketio), started on the server of the
 * HTTP engine; `REALTIME=none` starts none. Adding one is a folder under src/interfaces with a
 * RealtimeTransportFactory, and one line here.
 */
export const realtimeTransports: Readonly<Record<Exclude<Config['realtime'], 'none'>, RealtimeTransportFactory>> = {
  socketio: socketIoTransport
}

/** Starts the real-time transport REALTIME names on an HTTP engine's `server`; none with `REALTIME=none`. */
export function startRealtime(
  config: Config,
  app: App,
  server: HttpServer,
  logger: Logger,
  clock: Clock
): RealtimeTransport | undefined {
  if (config.realtime === 'none') return undefined
  return realtimeTransports[config.realtime](app, server, realtimeOptions(config, logger, clock))
}

/** The real-time transport's limits from config (docs/wire-protocol.md, Connection), whichever REALTIME names. */
export function realtimeOptions(config: Config, logger: Logger, clock: Clock): RealtimeOptions {
  return {
    logger,
    clock,
    maxMessageSize: config.socketMaxMessageSize,
    maxConcurrentCalls: config.socketMaxConcurrentCalls,
    maxBufferedBytes: config.socketMaxBufferedBytes,
    recoveryWindowMs: config.socketRecoveryWindowMs,
    corsOrigins: config.corsOrigins
  }
}
