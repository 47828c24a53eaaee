import { errorOutcome, type Metrics } from '../../domain/metrics.js'
import type { CallInfo, Extension } from '../../domain/service/extension.js'

/**
 * Metrics' extension of the app: every call from a transport timed by service, method (one the service exposes,
 * else `_OTHER`: a client can name any method), transport and outcome; events published and delivered; real-time
 * connections opened, closed and dropped for not reading.
 */
export function metricsExtension(metrics: Metrics): Extension {
  return {
    aroundCall(call, next) {
      if (call.provider === undefined) return next()
      const start = performance.now()
      return next().then(
        (result) => {
          measure(metrics, call, 'ok', start)
          return result
        },
        (error: unknown) => {
          measure(metrics, call, errorOutcome(error), start)
          throw error
        }
      )
    },
    published: (path, event) => metrics.eventPublished(path, event),
    delivered: (path, event, connections) => metrics.eventDelivered(path, event, connections),
    connection(change, transport) {
      if (change === 'opened') metrics.connectionOpened(transport)
      else if (change === 'closed') metrics.connectionClosed(transport)
      else metrics.connectionDroppedSlow(transport)
    }
  }
}

/** One call's duration, by service, method (`_OTHER` for one the service does not expose), transport and outcome. */
function measure(metrics: Metrics, call: CallInfo, outcome: string, start: number): void {
  metrics.serviceCall(
    call.path,
    call.exposed ? call.method : '_OTHER',
    String(call.provider),
    outcome,
    (performance.now() - start) / 1000
  )
}
