import 'reflect-metadata'
import { App } from './application/app.js'
import { FeathersError } from './domain/errors/errors.js'
import { SetupError } from './domain/errors/setup-error.js'
import { Logger } from './domain/logger.js'
import { StoreFactory } from './domain/store/store-factory.js'
import { ConfigError, loadConfig } from './infrastructure/config/config.js'
import { listenFailure, StartupError, staticDirToServe } from './infrastructure/config/startup-checks.js'
import { buildContainer, createHttpEngine, startRealtime, stopModules } from './container.js'

async function main(): Promise<void> {
  const config = loadConfig()
  // Loads the modules configuration selects (src/modules/index.ts): nothing else of them is ever imported.
  const container = await buildContainer(config)
  const logger = container.get<Logger>(Logger)
  const app = container.get<App>(App)
  // STATIC_DIR is read from the app's folder, not the current directory; a missing one is only a warning.
  config.staticDir = await staticDirToServe(config.staticDir, (message, fields) => logger.warn(message, fields))
  await app.setup()
  const engine = createHttpEngine(container)
  // Attached before the server listens: the first connection finds it.
  const realtime = startRealtime(container, engine.server)
  const http = await engine.listen(config.port, config.host)
  logger.info('plumage started', {
    url: http.url,
    http: config.http,
    realtime: config.realtime,
    store: config.store,
    services: app.paths
  })
  const stop = async (signal: string) => {
    logger.info('shutting down', { signal })
    // Open connections would hold the HTTP server open; REST requests in flight still finish. Clients
    // see their transport close, reconnect by themselves and resume on whichever instance answers.
    realtime?.dropConnections()
    await http.close()
    // Socket calls still running finish before the store closes under them (at most 10 s).
    await app.idle()
    await app.teardown()
    await container.get<StoreFactory>(StoreFactory).close()
    // The spans of the last requests are still buffered: the tracing module exports them before leaving.
    await stopModules(container)
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))
}

main().catch((error: unknown) => {
  // Operational errors (configuration, the database, a bad rule) are one line with the driver's cause; bugs: a stack.
  const known = [ConfigError, FeathersError, StartupError, SetupError].some((type) => error instanceof type)
  const cause = (error as { cause?: { message?: unknown; code?: unknown } } | undefined)?.cause
  const detail =
    typeof cause?.message === 'string'
      ? ` (${[cause.code, cause.message].filter((part) => typeof part === 'string').join(': ')})`
      : ''
  const message =
    listenFailure(error, process.env.HOST || '127.0.0.1') ??
    (known ? (error as Error).message + detail : String((error as Error)?.stack ?? error))
  process.stderr.write(`plumage failed to start: ${message}\n`)
  process.exit(1)
})
