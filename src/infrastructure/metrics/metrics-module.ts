import { ContainerModule } from 'inversify'
import { Clock } from '../../domain/clock.js'
import { Metrics, noMetrics } from '../../domain/metrics.js'
import { Config } from '../config/config.js'
import { PrometheusMetrics } from './prometheus-metrics.js'

/** Prometheus metrics on prom-client (METRICS, default on); off, the no-op port: nothing is measured. */
export const metricsModule = new ContainerModule(({ bind }) => {
  bind<Metrics>(Metrics)
    .toResolvedValue(
      (config: Config, clock: Clock) =>
        config.metrics ? new PrometheusMetrics({ now: () => clock.now() }) : noMetrics,
      [Config, Clock]
    )
    .inSingletonScope()
})
