import type { Server } from 'node:http'
import type { Logger as Pino } from 'pino'
import type { Logger } from '../../domain/logger.js'
import type { HealthOptions } from './health.js'
import type { HttpExtension } from './http-extension.js'
import type { RunningServer } from './http-server.js'

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
   * Optional capabilities (src/interfaces/api-docs, http-metrics, http-tracing…): routes served before the
   * services, a wrapper of the request listener, a look at the server. Both engines mount them alike.
   */
  extensions?: readonly HttpExtension[]
}
