import { Logger } from '../domain/logger.js'
import { noTracer, Tracer } from '../domain/tracing.js'
import { Config } from '../infrastructure/config/config.js'
import { PinoLogger } from '../infrastructure/logging/pino-logger.js'
import {
  readTracingSettings,
  startTracing,
  tracedStoreFactory,
  tracingExtension,
  type Tracing
} from '../infrastructure/tracing/index.js'
import { httpTracing, realtimeTracing } from '../interfaces/tracing/index.js'
import type { PlumageModule } from './module.js'

let tracing: Tracing | undefined

/**
 * Tracing (an OTLP endpoint set): OpenTelemetry spans of requests, socket calls, service calls, store queries
 * and event publications, exported over OTLP/HTTP (src/infrastructure/tracing, src/interfaces/tracing).
 */
export const module: PlumageModule = {
  async bind(container, { env }) {
    // The configuration read the same variables: without an endpoint in `env` (a test's own), nothing is traced.
    const settings = readTracingSettings(env)
    tracing = settings && (await startTracing(settings))
    const tracer = tracing?.tracer ?? noTracer
    container.bind<Tracer>(Tracer).toConstantValue(tracer)
    // Log lines carry the trace and span ids of the request or call they belong to.
    container
      .rebind<Logger>(Logger)
      .toResolvedValue((config: Config) => PinoLogger.fromConfig(config, tracer), [Config])
      .inSingletonScope()
    container.onActivation<Logger>(Logger, (_context, logger) => {
      tracing?.reportTo(logger)
      return logger
    })
  },
  // Every store query of the services is a span.
  stores: (stores, container) =>
    tracedStoreFactory(stores, container.get<Tracer>(Tracer), container.get<Config>(Config).store),
  extend: (app, container) => app.extend(tracingExtension(container.get<Tracer>(Tracer))),
  http: (_app, container) => httpTracing(container.get<Tracer>(Tracer)),
  realtime: (container) => realtimeTracing(container.get<Tracer>(Tracer)),
  stop: async () => {
    await tracing?.shutdown()
  }
}
