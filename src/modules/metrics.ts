import type { Container } from 'inversify'
import { Clock } from '../domain/clock.js'
import { Metrics } from '../domain/metrics.js'
import { Config } from '../infrastructure/config/config.js'
import { MeasuredStoreFactory, metricsExtension, PrometheusMetrics } from '../infrastructure/metrics/index.js'
import { httpMetrics } from '../interfaces/http-metrics/index.js'
import type { PlumageModule } from './module.js'

/**
 * METRICS=true (the default): Prometheus metrics on prom-client (src/infrastructure/metrics) — service calls,
 * connections, events, store queries and HTTP requests — served at GET /metrics.
 */
export const module: PlumageModule = {
  bind(container) {
    container
      .bind<Metrics>(Metrics)
      .toResolvedValue((clock: Clock) => new PrometheusMetrics({ now: () => clock.now() }), [Clock])
      .inSingletonScope()
  },
  // The services' stores are timed (db_client_operation_duration_seconds).
  stores: (stores, container) =>
    new MeasuredStoreFactory(stores, container.get<Metrics>(Metrics), config(container).store),
  extend: (app, container) => app.extend(metricsExtension(container.get<Metrics>(Metrics))),
  http: (_app, container) => {
    const token = config(container).metricsToken
    return httpMetrics({ port: container.get<Metrics>(Metrics), ...(token ? { token } : {}) })
  }
}

const config = (container: Container) => container.get<Config>(Config)
