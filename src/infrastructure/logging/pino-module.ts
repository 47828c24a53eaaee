import { ContainerModule } from 'inversify'
import { Logger } from '../../domain/logger.js'
import { Tracer } from '../../domain/tracing.js'
import { Config } from '../config/config.js'
import { PinoLogger } from './pino-logger.js'

/** Logs as pino JSON lines at LOG_LEVEL (pretty in development on a terminal), with trace ids when tracing is on. */
export const pinoModule = new ContainerModule(({ bind }) => {
  bind<Logger>(Logger)
    .toResolvedValue((config: Config, tracer: Tracer) => PinoLogger.fromConfig(config, tracer), [Config, Tracer])
    .inSingletonScope()
})
