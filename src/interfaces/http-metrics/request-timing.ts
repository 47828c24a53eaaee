import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Metrics } from '../../domain/metrics.js'
import { pathOf } from '../http/http-extension.js'
import { serviceRoute } from '../http/service-route.js'

/** The label of every request that is neither a service nor one of the engine's own routes (static files, 404s). */
export const OTHER_ROUTE = 'other'

/** Verbs labelled as themselves; any other is `_OTHER`, as OpenTelemetry's http.request.method says. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/**
 * When each response's request arrived (performance.now()). Beside the response, not on it: a property added to an
 * express response made a new hidden class every request (src/interfaces/http/service-route.ts says why).
 */
const starts = new WeakMap<ServerResponse, number>()

/** What Node publishes on `http.server.response.finish` when a response of any server has finished. */
interface Finished {
  request: IncomingMessage
  response: ServerResponse
  server: Server
}

/**
 * Times every request the server answers, from its arrival to the end of its response (requests
 * whose connection closes first are not counted), by method, route and status. A service's requests
 * are labelled with its route template (`/messages/:id`), the engine's own fixed `paths` (`/health`,
 * `/metrics`, the API docs) as themselves, anything else `other`. Added first, so it sees every
 * request; socket.io, attached after, takes its own requests before this listener sees them (they have no start
 * time, so they are not counted). The end is Node's `http.server.response.finish` diagnostics channel, published
 * after each response's `finish`: no listener is added to each response (with Node's own, that made its `finish`
 * listeners an array, copied on every emit).
 */
export function observeRequests(server: Server, metrics: Metrics, paths: readonly string[]): void {
  const fixed = new Set(paths)
  const routeOf = (req: IncomingMessage, res: ServerResponse): string => {
    const route = serviceRoute(res)
    if (route !== undefined) return route
    const path = pathOf(req.url ?? '')
    return fixed.has(path) ? path : OTHER_ROUTE
  }
  // One subscriber for every response of every server in the process (the start times are in `starts`).
  const finished = (message: unknown): void => {
    const { request, response, server: from } = message as Finished
    const start = starts.get(response)
    if (from !== server || start === undefined) return
    const method = METHODS.has(request.method!) ? request.method! : '_OTHER'
    metrics.httpRequest(method, routeOf(request, response), response.statusCode, (performance.now() - start) / 1000)
  }
  subscribe(FINISHED, finished)
  server.once('close', () => unsubscribe(FINISHED, finished))
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    starts.set(res, performance.now())
  })
}

const FINISHED = 'http.server.response.finish'
