import type compression from 'compression'
import type cors from 'cors'
import express, { type Express, type RequestHandler } from 'express'
import { createRequire } from 'node:module'
import { createServer } from 'node:http'
import type { pinoHttp } from 'pino-http'
import { Gateway, type App } from '../../application/transport/index.js'
import { NotFound } from '../../domain/errors/errors.js'
import { silentLogger } from '../../domain/logger.js'
import type { HttpAppOptions, HttpEngine } from '../http/http-engine.js'
import { serve } from '../http/http-server.js'
import { observeRequests, ownRoutes } from '../http/metrics.js'
import { asyncApiDocument } from '../http/asyncapi-document.js'
import { openApiDocument } from '../http/openapi-document.js'
import { tracedRequests } from '../http/traced-requests.js'
import { parseQueryString } from '../http/query-parser.js'
import { apiDocs } from './api-docs.js'
import { errorHandler } from './error-response.js'
import { healthCheck } from './health.js'
import { metricsEndpoint } from './metrics.js'
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

/**
 * The HTTP driving adapter: an express 5 app exposing every service of `app` per docs/wire-protocol.md, REST,
 * with optional middleware (CORS, compression, static files, request log…), each off unless configured.
 */
export function createRestApp(app: App, options: RestAppOptions = {}): Express {
  const logger = options.logger ?? silentLogger
  const limit = options.bodyLimit ?? '100kb'
  const bodyParsers = options.bodyParsers ?? true
  const http = express()
  http.disable('x-powered-by')
  http.disable('etag')
  http.set('query parser', parseQueryString)

  if (options.health) http.use(healthCheck(options.health))
  if (options.metrics) http.use(metricsEndpoint(options.metrics))
  if (options.apiDocs) {
    const { specPath, uiPath, ...document } = options.apiDocs
    http.use(
      apiDocs({
        document: () => openApiDocument(app, document),
        asyncApi: () => asyncApiDocument(app, document),
        specPath,
        uiPath
      })
    )
  }
  if (options.requestLog) {
    const { pinoHttp: requestLogger } = optional('pino-http') as { pinoHttp: typeof pinoHttp }
    // A logger of its own never writes the bearer token or cookies (the app's pino redacts them too).
    const redact = {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
      censor: '***'
    }
    http.use(requestLogger(options.requestLog === true ? { redact } : { logger: options.requestLog }))
  }
  if (options.compression) http.use((optional('compression') as typeof compression)())
  const origins = options.corsOrigins ?? []
  if (origins.length > 0)
    http.use((optional('cors') as typeof cors)({ origin: origins.includes('*') ? true : origins, credentials: true }))
  if (bodyParsers) http.use(bodyParser(limit))
  for (const middleware of options.middleware ?? []) http.use(middleware)
  http.use(
    serviceMiddleware(new Gateway(app), {
      logger,
      formatter: options.formatter,
      bodyParsed: bodyParsers,
      measured: options.metrics !== undefined
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
  const server = createServer(tracedRequests(app, options.tracer, createRestApp(app, options)))
  if (options.metrics) observeRequests(server, options.metrics.port, ownRoutes(options))
  return { server, listen: (port, host) => serve(server, port, host) }
}
