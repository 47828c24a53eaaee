import type { HttpExtension } from '../http/http-extension.js'
import { metricsRoute, type MetricsOptions } from './metrics-endpoint.js'
import { observeRequests } from './request-timing.js'

/*
 * The HTTP side of metrics (README "Metrics"), an extension of either engine: every request's duration by
 * method, route template and status, and `GET /metrics`, neither request-logged nor in the OpenAPI document.
 */

export type { MetricsOptions } from './metrics-endpoint.js'

/** Request timing and `GET /metrics` for an engine's `extensions`. */
export function httpMetrics(options: MetricsOptions): HttpExtension {
  return {
    routes: () => [metricsRoute(options)],
    attach: (server, paths) => observeRequests(server, options.port, paths),
    readsServiceRoutes: true
  }
}
