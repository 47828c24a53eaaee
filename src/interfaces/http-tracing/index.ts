import type { HttpExtension } from '../http/http-extension.js'
import { tracedRequests } from './traced-requests.js'

/**
 * The HTTP side of tracing (README "Traces"), an extension of either engine: each request a server span
 * around the engine's handling, when the app's tracer is enabled (otherwise the engine is left as it is).
 */
export function httpTracing(): HttpExtension {
  return { wrap: (listener, app) => tracedRequests(app, listener) }
}
