import { errorOutcome, type Metrics } from '../../domain/metrics.js'
import type { Extension } from '../../domain/service/extension.js'

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
      const done = (outcome: string) =>
        metrics.serviceCall(
          call.path,
          call.exposed ? call.method : '_OTHER',
          String(call.provider),
          outcome,
          (performance.now() - start) / 1000
        )
      return next().then(
        (result) => {
          done('ok')
          return result
        },
        (error: unknown) => {
          done(errorOutcome(error))
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
