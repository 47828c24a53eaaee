import type { RequestListener } from 'node:http'
import { Gateway, type App } from '../../application/transport/index.js'
import type { Span, Tracer } from '../../domain/tracing.js'
import { pathOf } from '../http/http-extension.js'
import { restRoute } from '../http/rest-call.js'
import { routeTemplate } from '../http/service-route.js'

/** Methods named as they are (OpenTelemetry's list); any other is `_OTHER`, so names stay few. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE', 'QUERY'])

/**
 * Wraps an HTTP engine's request listener so that each request (health probes excepted, as in the
 * request log) is a server span: `GET /users/:id` for a service (the route template; `GET` for
 * anything else), with the standard `http.*` and `url.path` attributes, failed on a 5xx. A W3C
 * `traceparent` header makes it a child of the caller's span; without one it starts a trace. Tracing
 * off, the listener is returned as is. Node keeps the span active in the request's and response's
 * events, so body parsing, the service call and the request log line all run inside it.
 */
export function tracedRequests(app: App, tracer: Tracer, listener: RequestListener): RequestListener {
  if (!tracer.enabled) return listener
  const gateway = new Gateway(app)
  return (req, res) => {
    const url = req.url ?? '/'
    const path = pathOf(url)
    if (path === '/health') return listener(req, res)
    const route = routeOf(gateway, url)
    const method = KNOWN_METHODS.has(req.method ?? '') ? req.method! : '_OTHER'
    const traceparent = req.headers.traceparent
    void tracer.run(
      route === undefined ? (method === '_OTHER' ? 'HTTP' : method) : `${method} ${route}`,
      {
        kind: 'server',
        parent: typeof traceparent === 'string' ? traceparent : null,
        attributes: {
          'http.request.method': method,
          ...(method === '_OTHER' ? { 'http.request.method_original': req.method } : {}),
          'http.route': route,
          'url.path': path,
          'url.scheme': 'http',
          'user_agent.original': req.headers['user-agent']
        }
      },
      (span: Span) =>
        new Promise<void>((resolve) => {
          res.once('close', () => {
            span.setAttributes({ 'http.response.status_code': res.statusCode })
            if (res.statusCode >= 500) span.fail(String(res.statusCode))
            resolve()
          })
          listener(req, res)
        })
    )
  }
}

/** `/users/:id`: the service's registered path, and `/:id` when the URL names a record. */
function routeOf(gateway: Gateway, url: string): string | undefined {
  const route = restRoute(gateway, url)
  return route && routeTemplate(route.target)
}
