import type { Server } from 'node:http'
import type { Logger as Pino } from 'pino'
import type { OpenApiOptions } from './openapi-document.js'
import type { Logger } from '../../domain/logger.js'
import type { Tracer } from '../../domain/tracing.js'
import type { HealthOptions } from './health.js'
import type { RunningServer } from './http-server.js'
import type { MetricsOptions } from './metrics.js'

/**
 * An HTTP engine serving the app's services per docs/wire-protocol.md, REST: express
 * (src/interfaces/rest) or fastify (src/interfaces/fastify). The composition root picks one from the
 * `HTTP` setting; both answer the same wire, so clients cannot tell them apart.
 */
export interface HttpEngine {
  /** The node HTTP server the engine answers on: socket.io attaches here, before or after `listen`. */
  readonly server: Server
  /** Listens on `port` and `host`; the running server's `close` stops gracefully (in-flight requests finish). */
  listen(port: number, host: string): Promise<RunningServer>
}

/** What both engines accept; each adds its own (a formatter for its response type, express middleware…). */
export interface HttpAppOptions {
  /** Where unexpected errors are logged (the client only ever sees a generic message). */
  logger?: Logger
  /** Size limit of JSON and urlencoded bodies, e.g. '100kb' (413 above it). */
  bodyLimit?: string
  /**
   * Register the JSON and urlencoded parsers (default true); off, create/update/patch answer the 400s for missing data.
   */
  bodyParsers?: boolean
  /** Allowed CORS origins; empty or absent = no CORS; ['*'] = any origin. */
  corsOrigins?: string[]
  compression?: boolean
  /** Directory served as static files after the services (services win on equal paths). */
  staticDir?: string
  /** One log line per request: true for the engine's own pino logger, or the app's pino instance. */
  requestLog?: boolean | Pino
  /** Mounts `GET /health` (not request-logged, so probes do not flood the log). */
  health?: HealthOptions
  /**
   * Serves the OpenAPI 3.1 document generated from the app's services at `specPath` (default
   * `/openapi.json`) and the API reference page at `uiPath` (default `/docs`); with them, the AsyncAPI 3.0
   * document of the socket protocol at `/asyncapi.json` and its page at `/asyncapi`.
   */
  apiDocs?: OpenApiOptions & { specPath?: string; uiPath?: string }
  /**
   * Times every request (src/interfaces/http/metrics.ts) and serves `GET /metrics` (not
   * request-logged, not in the OpenAPI document); absent, nothing is measured.
   */
  metrics?: MetricsOptions
  /** Traced, each request is a server span (traced-requests.ts). */
  tracer?: Tracer
}
