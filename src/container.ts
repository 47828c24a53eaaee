import 'reflect-metadata'
import { Container } from 'inversify'
import { App } from './application/app.js'
import { Logger } from './domain/logger.js'
import { StoreFactory } from './domain/store/store-factory.js'
import { Config } from './infrastructure/config/config.js'
import { PinoLogger } from './infrastructure/logging/pino-logger.js'
import { InMemoryStoreFactory } from './infrastructure/memory/in-memory-store-factory.js'
import { createReferenceApp } from './reference-app.js'

/** Store adapters by the STORE setting. Adding one here is all it takes to swap persistence. */
export const storeAdapters: Record<string, (config: Config, logger: Logger) => StoreFactory> = {
  memory: () => new InMemoryStoreFactory()
}

/**
 * The composition root: the only place that knows every adapter. Ports are bound to adapters
 * from configuration; everything else receives its ports.
 */
export function buildContainer(config: Config, overrides: { logger?: Logger } = {}): Container {
  const container = new Container()
  container.bind<Config>(Config).toConstantValue(config)
  const logger = overrides.logger ?? PinoLogger.fromConfig(config)
  container.bind<Logger>(Logger).toConstantValue(logger)
  const adapter = storeAdapters[config.store]
  if (!adapter) throw new Error(`No store adapter is registered for STORE=${config.store}`)
  container.bind<StoreFactory>(StoreFactory).toConstantValue(adapter(config, logger))
  container.bind<App>(App).toDynamicValue((context) => createReferenceApp({
    stores: context.get<StoreFactory>(StoreFactory)
  })).inSingletonScope()
  return container
}
