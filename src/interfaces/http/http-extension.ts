import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'
import type { App } from '../../application/transport/index.js'
import type { Logger } from '../../domain/logger.js'
import { errorResponse, toFeathersError } from './error-response.js'

/**
 * A GET (and HEAD) route served before the services, the same on every engine: node's own request and
 * response, so an extension never sees express or fastify.
 */
export interface HttpRoute {
  /** `/metrics`; with `prefix`, every path that starts with it (e.g. `/docs/` for Swagger UI's files). */
  readonly path: string
  readonly prefix?: boolean
  /** Left out of the request log, as `/health` is: probes, scrapers and pages' assets would flood it. */
  readonly quiet?: boolean
  /** Answers the request; a rejection is answered with the error envelope (docs/wire-protocol.md, Errors). */
  handle(req: IncomingMessage, res: ServerResponse): void | Promise<void>
}

/**
 * What an optional HTTP capability adds to an engine (API docs, metrics, tracing…), given in
 * `HttpAppOptions.extensions`. Both engines mount extensions the same way (`mountExtensions` below), so an
 * engine imports none of them, and a capability nobody configured is never loaded.
 */
export interface HttpExtension {
  /** Its routes, built once per engine for the app it serves. */
  routes?(app: App): readonly HttpRoute[]
  /**
   * Wraps the engine's request listener (the first extension's wrapper is the outermost); returning `listener`
   * itself leaves the engine as it is (tracing with the tracer off).
   */
  wrap?(listener: RequestListener, app: App): RequestListener
  /**
   * Sees the engine's node server before it listens and before the real-time transport attaches.
   * `paths` are the exact paths the engine answers itself (`/health`, every extension's exact routes).
   */
  attach?(server: Server, paths: readonly string[]): void
  /**
   * The engines mark each service response with the route it hit (`serviceRoute` in ./service-route.ts)
   * only when an extension asks: otherwise requests do not pay for it.
   */
  readonly readsServiceRoutes?: boolean
}

/** Every extension of an engine, put together once: routes to look up, a wrapper, what sees the server. */
export interface MountedExtensions {
  /** The route a request is for, if any (GET and HEAD only). */
  find(method: string | undefined, url: string | undefined): HttpRoute | undefined
  readonly routes: readonly HttpRoute[]
  wrap(listener: RequestListener): RequestListener
  /** Whether an extension wraps the listener (fastify then builds its node server itself, to wrap its handler). */
  readonly wraps: boolean
  attach(server: Server): void
  readonly marksServiceRoutes: boolean
}

/** Puts `extensions` (after the engine's own `routes`, e.g. `/health`) together for the engine serving `app`. */
export function mountExtensions(
  app: App,
  extensions: readonly HttpExtension[] = [],
  own: readonly HttpRoute[] = []
): MountedExtensions {
  const routes = [...own, ...extensions.flatMap((extension) => extension.routes?.(app) ?? [])]
  const exact = new Map(routes.filter((route) => !route.prefix).map((route) => [route.path, route]))
  // Longest prefix first: `/docs/swagger/` would win over `/docs/`.
  const prefixes = routes.filter((route) => route.prefix).sort((a, b) => b.path.length - a.path.length)
  const paths = [...exact.keys()]
  const wrap = (listener: RequestListener) =>
    extensions.reduceRight((inner, extension) => extension.wrap?.(inner, app) ?? inner, listener)
  const unwrapped: RequestListener = () => {}
  return {
    routes,
    find(method, url = '/') {
      if (routes.length === 0 || (method !== 'GET' && method !== 'HEAD')) return undefined
      const path = pathOf(url)
      return exact.get(path) ?? prefixes.find((route) => path.startsWith(route.path))
    },
    wrap,
    wraps: wrap(unwrapped) !== unwrapped,
    attach(server) {
      for (const extension of extensions) extension.attach?.(server, paths)
    },
    marksServiceRoutes: extensions.some((extension) => extension.readsServiceRoutes)
  }
}

/** Runs a route's handler; what it throws is answered with the error envelope (or ends a response already begun). */
export async function answer(route: HttpRoute, req: IncomingMessage, res: ServerResponse, logger: Logger) {
  try {
    await route.handle(req, res)
  } catch (thrown) {
    if (res.headersSent) return void res.destroy()
    const { status, headers, body } = errorResponse(
      toFeathersError(thrown, logger, `${req.method} ${pathOf(req.url!)}`)
    )
    respond(res, status, headers, body)
  }
}

/** Writes a whole answer: status, headers, `Content-Length` and the body (left out for HEAD by node itself). */
export function respond(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.statusCode = status
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(body)
}

/** The path of a request's URL, without its query string. */
export function pathOf(url: string): string {
  const mark = url.indexOf('?')
  return mark < 0 ? url : url.slice(0, mark)
}
