import 'reflect-metadata'
import { App } from './application/app.js'
import { Logger } from './domain/logger.js'
import { StoreFactory } from './domain/store/store-factory.js'
import { ConfigError, loadConfig } from './infrastructure/config/config.js'
import { buildContainer } from './container.js'

async function main(): Promise<void> {
  const config = loadConfig()
  const container = buildContainer(config)
  const logger = container.get<Logger>(Logger)
  const app = container.get<App>(App)
  await app.setup()
  logger.info('plumage started', { store: config.store, services: app.paths })
  const stop = async (signal: string) => {
    logger.info('shutting down', { signal })
    await app.teardown()
    await container.get<StoreFactory>(StoreFactory).close()
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : String((error as Error)?.stack ?? error)
  process.stderr.write(`plumage failed to start: ${message}\n`)
  process.exit(1)
})
