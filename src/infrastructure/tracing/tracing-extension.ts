import type { Extension } from '../../domain/service/extension.js'
import { isServerError, type Tracer } from '../../domain/tracing.js'

/**
 * Tracing's extension of the app: each service call is the span `<path>.<method>` (its store queries and the calls
 * its hooks make are children), and each event's publication a producer span `<path> <event> publish` of a trace of
 * its own, linked to the write that caused it — the call on this instance (still the active span when its events
 * are published), or the writer's span that the store carried from another instance.
 */
export function tracingExtension(tracer: Tracer): Extension {
  return {
    aroundCall: (call, next) =>
      tracer.run(
        `${call.path}.${call.method}`,
        {
          attributes: {
            'plumage.service': call.path,
            'plumage.method': call.method,
            'plumage.provider': call.provider ?? 'internal'
          },
          isError: isServerError
        },
        next
      ),
    aroundPublish(event, next) {
      const cause = event.trace ?? (event.cause === 'store' ? undefined : tracer.traceparent())
      tracer.run(
        `${event.path} ${event.event} publish`,
        {
          kind: 'producer',
          parent: null,
          links: cause === undefined ? [] : [cause],
          attributes: {
            'messaging.system': 'plumage',
            'messaging.operation.type': 'send',
            'messaging.destination.name': `${event.path} ${event.event}`
          }
        },
        next
      )
    }
  }
}
