import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Target } from '../../application/transport/index.js'
import { convertError } from '../../domain/errors/convert-error.js'
import { NotAuthenticated } from '../../domain/errors/errors.js'
import type { Metrics } from '../../domain/metrics.js'
import { ASYNCAPI_PAGE_PATH, ASYNCAPI_PATH } from './asyncapi-page.js'
import { errorResponse } from './error-response.js'

/*
 * Metrics of the HTTP engines, shared by express and fastify: every request's duration by method,
 * route template and status, and `GET /metrics` (README "Metrics"), which is neither request-logged
 * nor in the OpenAPI document.
 */

export interface MetricsOptions {
  /** Where requests are recorded, and what `GET /metrics` renders. */
  port: Metrics
  /** When set, `GET /metrics` requires `Authorization: Bearer <token>` (401 otherwise). */
  token?: string
  /** Default `/metrics`. */
  path?: string
}

/** The label of every request that is neither a service nor one of the engine's own routes (static files, 404s). */
export const OTHER_ROUTE = 'other'

/** Verbs labelled as themselves; any other is `_OTHER`, as OpenTelemetry's http.request.method says. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

const TARGET = Symbol('plumage.route')
const START = Symbol('plumage.start')
type Marked = ServerResponse & { [TARGET]?: Target; [START]?: number }

/** A service answers this response: its route template labels the request (set by the engines' service handlers). */
export function markRoute(res: ServerResponse, target: Target): void {
  ;(res as Marked)[TARGET] = target
}

/** `/messages` and `/messages/:id` (`/users/:userId/posts/:id`), per registered path: one string each. */
const templates = new Map<string, [collection: string, item: string]>()

function templateOf(target: Target): string {
  let pair = templates.get(target.path)
  if (!pair) templates.set(target.path, (pair = [`/${target.path}`, `/${target.path}/:id`]))
  return target.id === undefined ? pair[0] : pair[1]
}

/**
 * Times every request the server answers, from its arrival to the end of its response (requests
 * whose connection closes first are not counted). `routes` are the engine's own fixed paths
 * (`/health`, `/metrics`, the API docs), labelled as themselves. Added first, so it sees every
 * request; socket.io, attached after, takes its own requests before this listener sees them.
 */
export function observeRequests(server: Server, metrics: Metrics, routes: readonly string[]): void {
  const fixed = new Set(routes)
  const routeOf = (req: IncomingMessage, res: Marked): string => {
    const target = res[TARGET]
    if (target) return templateOf(target)
    const url = req.url ?? ''
    const mark = url.indexOf('?')
    const path = mark < 0 ? url : url.slice(0, mark)
    return fixed.has(path) ? path : OTHER_ROUTE
  }
  // One listener function for every response (the start time rides on it): no closure per request.
  function finished(this: Marked): void {
    const req = this.req
    const method = METHODS.has(req.method!) ? req.method! : '_OTHER'
    metrics.httpRequest(method, routeOf(req, this), this.statusCode, (performance.now() - this[START]!) / 1000)
  }
  server.prependListener('request', (_req: IncomingMessage, res: Marked) => {
    res[START] = performance.now()
    res.on('finish', finished)
  })
}

/** The fixed paths an engine serves itself, from its options: each is its own `http_route`. */
export function ownRoutes(options: {
  health?: unknown
  metrics?: MetricsOptions
  apiDocs?: { specPath?: string; uiPath?: string }
}): string[] {
  const routes: string[] = []
  if (options.health) routes.push('/health')
  if (options.metrics) routes.push(options.metrics.path ?? '/metrics')
  if (options.apiDocs) {
    const uiPath = options.apiDocs.uiPath ?? '/docs'
    routes.push(options.apiDocs.specPath ?? '/openapi.json', uiPath, `${uiPath}/`, ASYNCAPI_PATH, ASYNCAPI_PAGE_PATH)
  }
  return routes
}

export interface MetricsAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** What `GET /metrics` answers: the text format, or 401 without the right bearer token. */
export async function metricsAnswer(
  options: MetricsOptions,
  authorization: string | undefined
): Promise<MetricsAnswer> {
  if (options.token !== undefined && !bearerMatches(authorization, options.token)) {
    const { status, headers, body } = errorResponse(
      new NotAuthenticated('GET /metrics needs Authorization: Bearer <METRICS_TOKEN>')
    )
    return { status, headers: { ...headers, 'WWW-Authenticate': 'Bearer realm="metrics"' }, body }
  }
  try {
    const { contentType, body } = await options.port.render()
    return { status: 200, headers: { 'Content-Type': contentType, 'Cache-Control': 'no-store' }, body }
  } catch (error) {
    return errorResponse(convertError(error))
  }
}

/** Compares digests of equal length in constant time: neither the token nor its length leaks through timing. */
function bearerMatches(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')
  const digest = (value: string) => createHash('sha256').update(value).digest()
  return timingSafeEqual(digest(match?.[1] ?? ''), digest(token)) && match !== null
}
