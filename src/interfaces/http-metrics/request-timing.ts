import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Metrics } from '../../domain/metrics.js'
import { pathOf } from '../http/http-extension.js'
import { serviceRoute } from '../http/service-route.js'

/** The label of every request that is neither a service nor one of the engine's own routes (static files, 404s). */
export const OTHER_ROUTE = 'other'

/** Verbs labelled as themselves; any other is `_OTHER`, as OpenTelemetry's http.request.method says. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

const START = Symbol('plumage.start')
type Timed = ServerResponse & { [START]?: number }

/**
 * Times every request the server answers, from its arrival to the end of its response (requests
 * whose connection closes first are not counted), by method, route and status. A service's requests
 * are labelled with its route template (`/messages/:id`), the engine's own fixed `paths` (`/health`,
 * `/metrics`, the API docs) as themselves, anything else `other`. Added first, so it sees every
 * request; socket.io, attached after, takes its own requests before this listener sees them.
 */
export function observeRequests(server: Server, metrics: Metrics, paths: readonly string[]): void {
  const fixed = new Set(paths)
  const routeOf = (req: IncomingMessage, res: Timed): string => {
    const route = serviceRoute(res)
    if (route !== undefined) return route
    const path = pathOf(req.url ?? '')
    return fixed.has(path) ? path : OTHER_ROUTE
  }
  // One listener function for every response (the start time rides on it): no closure per request.
  function finished(this: Timed): void {
    const req = this.req
    const method = METHODS.has(req.method!) ? req.method! : '_OTHER'
    metrics.httpRequest(method, routeOf(req, this), this.statusCode, (performance.now() - this[START]!) / 1000)
  }
  server.prependListener('request', (_req: IncomingMessage, res: Timed) => {
    res[START] = performance.now()
    res.on('finish', finished)
  })
}
