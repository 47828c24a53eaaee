import type { Tracer } from '../../domain/tracing.js'
import type { HttpExtension } from '../http/http-extension.js'
import { tracedRequests } from './traced-requests.js'

/** The tracing module's part in the transports (README "Traces"): server spans of requests, handshakes and calls. */
export { realtimeTracing } from './realtime-tracing.js'

/** The HTTP side of tracing, an extension of either engine: each request a server span around the engine's handling. */
export function httpTracing(tracer: Tracer): HttpExtension {
  return { wrap: (listener, app) => tracedRequests(app, tracer, listener) }
}
