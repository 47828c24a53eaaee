import type compression from 'compression'
import type cors from 'cors'
import express, { type Express, type RequestHandler } from 'express'
import { createRequire } from 'node:module'
import type { Logger as Pino } from 'pino'
import type { pinoHttp } from 'pino-http'
import { openApiDocument, type App, type OpenApiOptions } from '../../application/transport/index.js'
import { NotFound } from '../../domain/errors/errors.js'
import { silentLogger, type Logger } from '../../domain/logger.js'
import { apiDocs } from './api-docs.js'
import { errorHandler } from './error-response.js'
import { healthCheck, type HealthOptions } from './health.js'
import { parseQueryString } from './query-parser.js'
import { serviceMiddleware, type Formatter } from './service-middleware.js'

export interface RestAppOptions {
  /** Where unexpected errors are logged (the client only ever sees a generic message). */
  logger?: Logger
  /** Size limit of JSON and urlencoded bodies, e.g. '100kb' (413 above it). */
  bodyLimit?: string
  /** Register the JSON and urlencoded parsers (default true); off, create/update/patch answer the 400s for missing data. */
  bodyParsers?: boolean
  /** Allowed CORS origins; empty or absent = no CORS middleware; ['*'] = any origin. */
  corsOrigins?: string[]
  compression?: boolean
  /** Directory served as static files after the services (services win on equal paths). */
  staticDir?: string
  /** pino-http request logging: true for its own logger, or the app's pino instance. */
  requestLog?: boolean | Pino
  /** Replaces the default JSON writer for service results. */
  formatter?: Formatter
  /** Mounts `GET /health` (before request logging, so probes do not flood the log). */
  health?: HealthOptions
  /** Extra middleware run before the services (after body parsing). */
  middleware?: RequestHandler[]
  /**
   * Serves the OpenAPI 3.1 document generated from the app's services at `specPath` (default
   * `/openapi.json`) and the API reference page at `uiPath` (default `/docs`).
   */
  apiDocs?: OpenApiOptions & { specPath?: string; uiPath?: string }
}

/** The optional middleware (all CommonJS) loads only when configured: each costs startup time and memory. */
const optional = createRequire(import.meta.url)

/** JSON and urlencoded (extended) parsing in one layer that skips bodiless verbs: GET is the hot path. */
function bodyParser(limit: string): RequestHandler {
  const json = express.json({ limit })
  const form = express.urlencoded({ extended: true, limit })
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE' || req.method === 'OPTIONS') return next()
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
  if (options.apiDocs) {
    const { specPath, uiPath, ...document } = options.apiDocs
    http.use(apiDocs({ document: () => openApiDocument(app, document), specPath, uiPath }))
  }
  if (options.requestLog) {
    const { pinoHttp: requestLogger } = optional('pino-http') as { pinoHttp: typeof pinoHttp }
    http.use(requestLogger(options.requestLog === true ? {} : { logger: options.requestLog }))
  }
  if (options.compression) http.use((optional('compression') as typeof compression)())
  const origins = options.corsOrigins ?? []
  if (origins.length > 0) http.use((optional('cors') as typeof cors)({ origin: origins.includes('*') ? true : origins, credentials: true }))
  if (bodyParsers) http.use(bodyParser(limit))
  for (const middleware of options.middleware ?? []) http.use(middleware)
  http.use(serviceMiddleware(app.gateway(), { logger, formatter: options.formatter, bodyParsed: bodyParsers }))
  if (options.staticDir) http.use(express.static(options.staticDir))
  http.use((req) => {
    throw new NotFound('Page not found', { url: req.originalUrl })
  })
  http.use(errorHandler(logger))
  return http
}
