import 'reflect-metadata'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Container } from 'inversify'
import { App } from './application/app.js'
import { LoginThrottle } from './application/authentication/login-throttle.js'
import { Sessions } from './application/authentication/sessions.js'
import { LoginAttempts } from './domain/auth/login-attempts.js'
import { PasswordHasher } from './domain/auth/password-hasher.js'
import { SecretTokens } from './domain/auth/secret-tokens.js'
import { SessionStore } from './domain/auth/session-store.js'
import { TokenService } from './domain/auth/token-service.js'
import { Clock } from './domain/clock.js'
import { BcryptPasswordHasher } from './infrastructure/auth/bcrypt-password-hasher.js'
import { CryptoSecretTokens } from './infrastructure/auth/crypto-secret-tokens.js'
import { InMemoryLoginAttempts } from './infrastructure/memory/in-memory-login-attempts.js'
import { InMemorySessionStore } from './infrastructure/memory/in-memory-session-store.js'
import { RethinkDbLoginAttempts } from './infrastructure/rethinkdb/rethinkdb-login-attempts.js'
import { RethinkDbSessionStore } from './infrastructure/rethinkdb/rethinkdb-session-store.js'
import { JsonWebTokenService } from './infrastructure/auth/json-web-token-service.js'
import { SystemClock } from './infrastructure/clock/system-clock.js'
import { Logger } from './domain/logger.js'
import { StoreFactory } from './domain/store/store-factory.js'
import { SchemaValidator } from './domain/schema/schema-validator.js'
import { UniqueKeys } from './domain/unique-keys.js'
import { Config } from './infrastructure/config/config.js'
import { PinoLogger } from './infrastructure/logging/pino-logger.js'
import { InMemoryStoreFactory } from './infrastructure/memory/in-memory-store-factory.js'
import { InMemoryUniqueKeys } from './infrastructure/memory/in-memory-unique-keys.js'
import { RethinkDbUniqueKeys } from './infrastructure/rethinkdb/rethinkdb-unique-keys.js'
import { parseRethinkDbUrl } from './infrastructure/rethinkdb/rethinkdb-connection.js'
import { AjvSchemaValidator } from './infrastructure/schema/ajv-schema-validator.js'
import { RethinkDbStoreFactory } from './infrastructure/rethinkdb/rethinkdb-store-factory.js'
import type { RestAppOptions } from './interfaces/rest/rest-app.js'
import type { SocketIoOptions } from './interfaces/socketio/attach-socket-io.js'
import { createReferenceApp } from './reference-app.js'

/** Store adapters by the STORE setting. Adding one here is all it takes to swap persistence. */
export const storeAdapters: Record<string, (config: Config, logger: Logger) => StoreFactory> = {
  memory: () => new InMemoryStoreFactory(),
  rethinkdb: (config, logger) => new RethinkDbStoreFactory(config.rethinkdbUrl, {
    logger,
    timeoutMs: config.rethinkdbTimeoutMs,
    directWrites: config.rethinkdbDirectWrites,
    ...(config.rethinkdbReplicas !== undefined ? { replicas: config.rethinkdbReplicas } : {}),
    ...(config.rethinkdbShards !== undefined ? { shards: config.rethinkdbShards } : {})
  })
}

/**
 * Where unique values are claimed, by the STORE setting: it must live where every process of the
 * app sees it (RethinkDB shares the store factory's connection pool).
 */
export const uniqueKeysAdapters: Record<string, (config: Config, logger: Logger) => UniqueKeys> = {
  memory: () => new InMemoryUniqueKeys(),
  rethinkdb: (config, logger) => new RethinkDbUniqueKeys({ db: parseRethinkDbUrl(config.rethinkdbUrl).db ?? 'test', logger })
}

/**
 * Where sessions (refresh tokens, the access-token deny-list) and login-throttling counters live, by
 * the STORE setting: shared by every instance on one database, so revocations and limits hold for all.
 */
export const sessionAdapters: Record<string, (config: Config, logger: Logger) => { sessions: SessionStore; attempts: LoginAttempts }> = {
  memory: () => ({ sessions: new InMemorySessionStore(), attempts: new InMemoryLoginAttempts() }),
  rethinkdb: (config, logger) => {
    const db = parseRethinkDbUrl(config.rethinkdbUrl).db ?? 'test'
    return { sessions: new RethinkDbSessionStore({ db, logger }), attempts: new RethinkDbLoginAttempts({ db, logger }) }
  }
}

function sessionStores(config: Config, logger: Logger): { sessions: SessionStore; attempts: LoginAttempts } {
  const adapter = sessionAdapters[config.store]
  if (adapter) return adapter(config, logger)
  logger.warn(`No session adapter is registered for STORE=${config.store}: sessions and login limits are kept in this process only`)
  return { sessions: new InMemorySessionStore(), attempts: new InMemoryLoginAttempts() }
}

function uniqueKeys(config: Config, logger: Logger): UniqueKeys {
  const adapter = uniqueKeysAdapters[config.store]
  if (adapter) return adapter(config, logger)
  logger.warn(`No unique keys adapter is registered for STORE=${config.store}: unique fields are enforced in this process only`)
  return new InMemoryUniqueKeys()
}

/**
 * The composition root: the only place that knows every adapter. Ports are bound to adapters
 * from configuration; everything else receives its ports.
 */
export function buildContainer(config: Config, overrides: { logger?: Logger; clock?: Clock; sessions?: SessionStore; attempts?: LoginAttempts } = {}): Container {
  const container = new Container()
  container.bind<Config>(Config).toConstantValue(config)
  const logger = overrides.logger ?? PinoLogger.fromConfig(config)
  container.bind<Logger>(Logger).toConstantValue(logger)
  const adapter = storeAdapters[config.store]
  if (!adapter) throw new Error(`No store adapter is registered for STORE=${config.store}`)
  container.bind<StoreFactory>(StoreFactory).toConstantValue(adapter(config, logger))
  container.bind<UniqueKeys>(UniqueKeys).toConstantValue(uniqueKeys(config, logger))
  container.bind<SchemaValidator>(SchemaValidator).toConstantValue(new AjvSchemaValidator())
  const clock = overrides.clock ?? new SystemClock()
  container.bind<Clock>(Clock).toConstantValue(clock)
  container.bind<PasswordHasher>(PasswordHasher).toConstantValue(new BcryptPasswordHasher(config.bcryptRounds))
  container.bind<TokenService>(TokenService).toConstantValue(new JsonWebTokenService({
    secret: config.authSecret ?? developmentSecret(logger), expiresIn: config.jwtExpiresIn, clock
  }))
  const stores = overrides.sessions && overrides.attempts ? undefined : sessionStores(config, logger)
  container.bind<SessionStore>(SessionStore).toConstantValue(overrides.sessions ?? stores!.sessions)
  container.bind<LoginAttempts>(LoginAttempts).toConstantValue(overrides.attempts ?? stores!.attempts)
  container.bind<SecretTokens>(SecretTokens).toConstantValue(new CryptoSecretTokens())
  container.bind<App>(App).toDynamicValue((context) => createReferenceApp({
    stores: context.get<StoreFactory>(StoreFactory),
    validator: context.get<SchemaValidator>(SchemaValidator),
    uniqueKeys: context.get<UniqueKeys>(UniqueKeys),
    clock,
    authentication: {
      hasher: context.get<PasswordHasher>(PasswordHasher),
      tokens: context.get<TokenService>(TokenService),
      clock,
      sessions: new Sessions({
        store: context.get<SessionStore>(SessionStore),
        secrets: context.get<SecretTokens>(SecretTokens),
        clock,
        accessTokenTtl: config.jwtExpiresInMs,
        refreshTokenTtl: config.refreshTokenExpiresInMs
      }),
      throttle: new LoginThrottle({
        attempts: context.get<LoginAttempts>(LoginAttempts),
        clock,
        maxFailures: config.loginMaxFailures,
        addressMaxFailures: config.loginAddressMaxFailures,
        window: config.loginFailureWindowMs,
        freeFailures: config.loginFreeFailures
      })
    }
  })).inSingletonScope()
  return container
}

/**
 * The HTTP layer's settings from config; request logs go through the app's pino when it has one.
 * With the store factory, `GET /health` reports whether the store answers.
 */
export function restAppOptions(config: Config, logger: Logger, stores?: StoreFactory): RestAppOptions {
  return {
    logger,
    ...(stores ? { health: { version: packageVersion(), check: () => stores.health() } } : {}),
    bodyLimit: config.bodyLimit,
    ...(config.apiDocs ? { apiDocs: { title: 'plumage', version: packageVersion(), description: API_DESCRIPTION } } : {}),
    corsOrigins: config.corsOrigins,
    compression: config.compression,
    staticDir: config.staticDir,
    requestLog: config.requestLog && (logger instanceof PinoLogger ? logger.pino : true)
  }
}

const API_DESCRIPTION = 'The reference chat: sign up with POST /users, log in with POST /authentication, then send the accessToken as a bearer token. Errors use Feathers\' JSON shape.'

/** The version in package.json, found from this file (src/ under jest, dist/ when built). */
function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json')
    if (existsSync(file)) return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version ?? 'unknown')
  }
  return 'unknown'
}

/** Without AUTH_SECRET (development and test only: config refuses production) tokens die with the process. */
function developmentSecret(logger: Logger): string {
  logger.warn('AUTH_SECRET is not set: using a random secret for this run, so access tokens stop working after a restart')
  return randomBytes(32).toString('base64url')
}

/** The socket.io transport's limits from config (docs/wire-protocol.md, Connection). */
export function socketIoOptions(config: Config, logger: Logger, clock: Clock): SocketIoOptions {
  return {
    logger,
    clock,
    maxMessageSize: config.socketMaxMessageSize,
    maxConcurrentCalls: config.socketMaxConcurrentCalls,
    server: config.corsOrigins.length > 0 ? { cors: { origin: config.corsOrigins } } : {}
  }
}
