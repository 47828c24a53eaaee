import { ContainerModule } from 'inversify'
import { Logger } from '../../domain/logger.js'
import { Config } from '../config/config.js'
import { PinoLogger } from './pino-logger.js'

/** Logs as pino JSON lines at LOG_LEVEL (pretty in development on a terminal); the tracing module adds trace ids. */
export const pinoModule = new ContainerModule(({ bind }) => {
  bind<Logger>(Logger)
    .toResolvedValue((config: Config) => PinoLogger.fromConfig(config), [Config])
    .inSingletonScope()
})
