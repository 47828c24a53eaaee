import type compression from 'compression'
import type cors from 'cors'
import express, { type Express, type RequestHandler } from 'express'
import { createRequire } from 'node:module'
import { createServer } from 'node:http'
import type { pinoHttp } from 'pino-http'
import { Gateway, type App } from '../../application/transport/index.js'
import { NotFound } from '../../domain/errors/errors.js'
import { silentLogger } from '../../domain/logger.js'
import type { Logger } from '../../domain/logger.js'
import { healthRoute } from '../http/health.js'
import type { HttpAppOptions, HttpEngine } from '../http/http-engine.js'
import { answer, mountExtensions, type MountedExtensions } from '../http/http-extension.js'
import { serve } from '../http/http-server.js'
import { parseQueryString } from '../http/query-parser.js'
import { errorHandler } from './error-response.js'
const CORS_OPTIONS = { credentials: true, exposedHeaders: ['Plumage-Offset'] } // read your writes: the offset header
import { serviceMiddleware, type Formatter } from './service-middleware.js'

/** The express engine's options: the shared ones, its formatter and extra middleware. */
export interface RestAppOptions extends HttpAppOptions {
  /** Replaces the default JSON writer for service results. */
  formatter?: Formatter
  /** Extra middleware run before the services (after body parsing). */
  middleware?: RequestHandler[]
}

/** The optional middleware (all CommonJS) loads only when configured: each costs startup time and memory. */
const optional = createRequire(import.meta.url)

/** JSON and urlencoded (extended) parsing in one layer that skips bodiless verbs: GET is the hot path. */
function bodyParser(limit: string): RequestHandler {
  const json = express.json({ limit })
  const form = express.urlencoded({ extended: true, limit })
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE' || req.method === 'OPTIONS')
      return next()
    json(req, res, (error?: unknown) => (error ? next(error) : form(req, res, next)))
  }
}

/** The routes of `/health` and of the extensions (src/interfaces/http/http-extension.ts), quiet or not. */
function extensionRoutes(mounted: MountedExtensions, quiet: boolean, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const route = mounted.find(req.method, req.url)
    if (!route || (route.quiet ?? false) !== quiet) return next()
    void answer(route, req, res, logger)
  }
}

/** `/health` and the extensions of `options`, mounted for `app`. */
function mounted(app: App, options: HttpAppOptions): MountedExtensions {
  return mountExtensions(app, options.extensions, options.health ? [healthRoute(options.health)] : [])
}

/**
 * The HTTP driving adapter: an express 5 app exposing every service of `app` per docs/wire-protocol.md, REST,
 * with optional middleware (CORS, compression, static files, request log…), each off unless configured, and the
 * routes of the extensions in `options` (their wrappers and server hooks are the engine's: `expressEngine`).
 */
export function createRestApp(app: App, options: RestAppOptions = {}, extensions = mounted(app, options)): Express {
  const logger = options.logger ?? silentLogger
  const limit = options.bodyLimit ?? '100kb'
  const bodyParsers = options.bodyParsers ?? true
  const http = express()
  http.disable('x-powered-by')
  http.disable('etag')
  http.set('query parser', parseQueryString)

  // Quiet routes (health, metrics, the API docs) come before the request log, the others after it.
  const routed = extensions.routes.length > 0
  if (routed) http.use(extensionRoutes(extensions, true, logger))
  if (options.requestLog) {
    const { pinoHttp: requestLogger } = optional('pino-http') as { pinoHttp: typeof pinoHttp }
    // A logger of its own never writes the bearer token or cookies (the app's pino redacts them too).
    const redact = {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
      censor: '***'
    }
    http.use(requestLogger(options.requestLog === true ? { redact } : { logger: options.requestLog }))
  }
  if (routed && extensions.routes.some((route) => !route.quiet)) http.use(extensionRoutes(extensions, false, logger))
  if (options.compression) http.use((optional('compression') as typeof compression)())
  const origins = options.corsOrigins ?? []
  if (origins.length > 0)
    http.use((optional('cors') as typeof cors)({ origin: origins.includes('*') ? true : origins, ...CORS_OPTIONS }))
  if (bodyParsers) http.use(bodyParser(limit))
  for (const middleware of options.middleware ?? []) http.use(middleware)
  http.use(
    serviceMiddleware(new Gateway(app), {
      logger,
      formatter: options.formatter,
      bodyParsed: bodyParsers,
      measured: extensions.marksServiceRoutes
    })
  )
  if (options.staticDir) http.use(express.static(options.staticDir))
  http.use((req) => {
    throw new NotFound('Page not found', { url: req.originalUrl })
  })
  http.use(errorHandler(logger))
  return http
}

/** The express engine (src/interfaces/http/http-engine.ts): the app above on a node:http server. */
export function expressEngine(app: App, options: RestAppOptions = {}): HttpEngine {
  const extensions = mounted(app, options)
  const server = createServer(extensions.wrap(createRestApp(app, options, extensions)))
  extensions.attach(server)
  return { server, listen: (port, host) => serve(server, port, host) }
}
