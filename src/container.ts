import { Container } from 'inversify'
import type { Server as HttpServer } from 'node:http'
import { App } from './application/app.js'
import { PasswordHasher } from './domain/auth/password-hasher.js'
import { TokenService } from './domain/auth/token-service.js'
import { Clock } from './domain/clock.js'
import { Logger } from './domain/logger.js'
import { SchemaValidator } from './domain/schema/schema-validator.js'
import { StoreFactory } from './domain/store/store-factory.js'
import { UniqueKeys } from './domain/unique-keys.js'
import { bcryptModule } from './infrastructure/auth/bcrypt-module.js'
import { jsonWebTokenModule } from './infrastructure/auth/jsonwebtoken-module.js'
import { systemClockModule } from './infrastructure/clock/system-clock-module.js'
import { Config, ConfigError, type Env } from './infrastructure/config/config.js'
import { pinoModule } from './infrastructure/logging/pino-module.js'
import { InMemoryUniqueKeys } from './infrastructure/memory/in-memory-unique-keys.js'
import { memoryStoreModule } from './infrastructure/memory/memory-module.js'
import { ajvModule } from './infrastructure/schema/ajv-module.js'
import type { HttpAppOptions, HttpEngine } from './interfaces/http/http-engine.js'
import type { RealtimeTransport, RealtimeTransportFactory } from './interfaces/realtime/realtime-transport.js'
import { expressEngine } from './interfaces/rest/rest-app.js'
import { socketIoTransport } from './interfaces/socketio/socketio-transport.js'
import { modules as registry, type PlumageModule, type RegisteredModule } from './modules/index.js'
import { packageVersion } from './package-version.js'
import { createReferenceApp } from './reference-app.js'

/** The modules the composition root loaded (bound in its container). */
export const Modules = Symbol.for('Modules')

export type HttpEngineFactory = (app: App, options: HttpAppOptions) => HttpEngine

export interface ContainerOptions {
  /** The registry of optional modules (default src/modules/index.ts). */
  modules?: Readonly<Record<string, RegisteredModule>>
  /** Where modules read their own settings (default process.env). */
  env?: Env
  /** Replace an adapter: tests log silently or move time by hand. */
  logger?: Logger
  clock?: Clock
  /** Replaces adapters once the modules bound theirs (two apps sharing one SessionStore, as two instances do). */
  rebind?(container: Container): void
}

/** The modules of the registry that `config` turns on, loaded (each with `import()`), in registry order. */
export async function loadModules(
  config: Config,
  modules: Readonly<Record<string, RegisteredModule>> = registry
): Promise<PlumageModule[]> {
  const entries = Object.values(modules)
  const check = (variable: string, value: string, core: string[], kind: 'store' | 'http' | 'realtime') => {
    const known = [...core, ...entries.flatMap((entry) => entry[kind] ?? [])]
    if (!known.includes(value)) throw new ConfigError(`${variable} must be one of ${known.join(', ')} (got '${value}')`)
  }
  check('STORE', config.store, ['memory'], 'store')
  check('HTTP', config.http, ['express'], 'http')
  check('REALTIME', config.realtime, ['socketio', 'none'], 'realtime')
  const selected = Object.values(modules).filter((entry) => entry.on(config))
  return Promise.all(selected.map(async (entry) => (await entry.load()).module))
}

/**
 * The composition root: the only place that knows every adapter. It binds the core's adapters (pino, the system
 * clock, Ajv, bcrypt, jsonwebtoken, the memory store), lets each module that configuration selects bind its own,
 * then the reference app with what the modules add to it. Nothing is constructed here: `container.get(App)` builds
 * what the app needs, once.
 */
export async function buildContainer(config: Config, options: ContainerOptions = {}): Promise<Container> {
  const modules = await loadModules(config, options.modules)
  const container = new Container()
  container.bind<Config>(Config).toConstantValue(config)
  container.bind<readonly PlumageModule[]>(Modules).toConstantValue(modules)
  container.load(pinoModule, systemClockModule, ajvModule, bcryptModule, jsonWebTokenModule)
  if (config.store === 'memory') container.load(memoryStoreModule({}))
  const replaceLogger = () => options.logger && container.rebind<Logger>(Logger).toConstantValue(options.logger)
  replaceLogger()
  if (options.clock) container.rebind<Clock>(Clock).toConstantValue(options.clock)
  const context = { config, env: options.env ?? process.env }
  for (const module of modules) await module.bind?.(container, context)
  // Tracing binds a logger of its own (with trace ids): the caller's still wins.
  replaceLogger()
  options.rebind?.(container)
  keepUniqueKeysInProcess(container, config.store)
  container
    .bind<App>(App)
    .toDynamicValue(() => referenceApp(container, modules))
    .inSingletonScope()
  return container
}

/** The reference app over the bound ports, with what each module adds to authentication and to the app. */
function referenceApp(container: Container, modules: readonly PlumageModule[]): App {
  const clock = container.get<Clock>(Clock)
  const addOns = Object.assign({}, ...modules.map((module) => module.authentication?.(container) ?? {}))
  const stores = modules.reduce(
    (decorated, module) => module.stores?.(decorated, container) ?? decorated,
    container.get<StoreFactory>(StoreFactory)
  )
  const app = createReferenceApp({
    stores,
    validator: container.get<SchemaValidator>(SchemaValidator),
    uniqueKeys: container.get<UniqueKeys>(UniqueKeys),
    clock,
    authentication: {
      hasher: container.get<PasswordHasher>(PasswordHasher),
      tokens: container.get<TokenService>(TokenService),
      clock,
      ...addOns
    }
  })
  for (const module of modules) module.extend?.(app as App, container)
  return app as App
}

/**
 * A store module that binds only StoreFactory still runs: unique keys are then kept in this process, with a
 * warning (they hold for one instance only).
 */
function keepUniqueKeysInProcess(container: Container, store: string): void {
  if (container.isBound(UniqueKeys)) return
  container
    .get<Logger>(Logger)
    .warn(`No unique keys adapter is registered for STORE=${store}: unique fields are enforced in this process only`)
  container.bind<UniqueKeys>(UniqueKeys).to(InMemoryUniqueKeys).inSingletonScope()
}

/** The HTTP engines HTTP can name: express, and those the loaded modules provide (fastify). */
export function httpEngines(container: Container): Readonly<Record<string, HttpEngineFactory>> {
  const modules = container.get<readonly PlumageModule[]>(Modules)
  return Object.assign({ express: expressEngine }, ...modules.map((module) => module.httpEngines ?? {}))
}

/**
 * The HTTP layer's settings from config; request logs go through the app's pino. `GET /health` reports whether the
 * store answers; modules add theirs (metrics' `GET /metrics`, the API documents, traced requests).
 */
export function httpAppOptions(container: Container, app: App): HttpAppOptions {
  const config = container.get<Config>(Config)
  const logger = container.get<Logger>(Logger)
  const stores = container.get<StoreFactory>(StoreFactory)
  const pino = (logger as { pino?: HttpAppOptions['requestLog'] }).pino
  const base: HttpAppOptions = {
    logger,
    health: { version: packageVersion(), check: () => stores.health() },
    bodyLimit: config.bodyLimit,
    corsOrigins: config.corsOrigins,
    compression: config.compression,
    staticDir: config.staticDir,
    requestLog: config.requestLog && (pino ?? true)
  }
  const modules = container.get<readonly PlumageModule[]>(Modules)
  return { ...base, extensions: modules.flatMap((module) => (module.http ? [module.http(app, container)] : [])) }
}

/** Starts the HTTP engine HTTP names for the container's app. */
export function createHttpEngine(container: Container): HttpEngine {
  const config = container.get<Config>(Config)
  const engine = httpEngines(container)[config.http]
  if (!engine) throw new ConfigError(`HTTP must be one of ${Object.keys(httpEngines(container)).join(', ')}`)
  const app = container.get<App>(App)
  return engine(app, httpAppOptions(container, app))
}

/**
 * Starts the real-time transport REALTIME names (socket.io, or a module's) on an HTTP engine's `server`, with the
 * modules' parts in it; none with `REALTIME=none`.
 */
export function startRealtime(container: Container, server: HttpServer): RealtimeTransport | undefined {
  const config = container.get<Config>(Config)
  if (config.realtime === 'none') return undefined
  const modules = container.get<readonly PlumageModule[]>(Modules)
  const transports = Object.assign({ socketio: socketIoTransport }, ...modules.map((m) => m.realtimeTransports ?? {}))
  return (transports[config.realtime] as RealtimeTransportFactory)(container.get<App>(App), server, {
    logger: container.get<Logger>(Logger),
    clock: container.get<Clock>(Clock),
    maxMessageSize: config.socketMaxMessageSize,
    maxConcurrentCalls: config.socketMaxConcurrentCalls,
    maxBufferedBytes: config.socketMaxBufferedBytes,
    recoveryWindowMs: config.socketRecoveryWindowMs,
    corsOrigins: config.corsOrigins,
    extensions: modules.flatMap((module) => (module.realtime ? [module.realtime(container)] : []))
  })
}

/** Stops the loaded modules after the app's teardown (tracing exports its last spans). */
export async function stopModules(container: Container): Promise<void> {
  for (const module of container.get<readonly PlumageModule[]>(Modules)) await module.stop?.(container)
}
