/**
 * The metrics module's adapters (README "Metrics"): Prometheus metrics on prom-client, the app extension that
 * measures calls, events and connections, and the store decorator that times queries. Wired in src/modules/metrics.ts.
 */
export { MeasuredStoreFactory } from './measured-store.js'
export { metricsExtension } from './metrics-extension.js'
export { PrometheusMetrics } from './prometheus-metrics.js'
