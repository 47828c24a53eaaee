import { createHash, timingSafeEqual } from 'node:crypto'
import { convertError } from '../../domain/errors/convert-error.js'
import { NotAuthenticated } from '../../domain/errors/errors.js'
import type { Metrics } from '../../domain/metrics.js'
import { errorResponse } from '../http/error-response.js'
import { respond, type HttpRoute } from '../http/http-extension.js'

export interface MetricsOptions {
  /** Where requests are recorded, and what `GET /metrics` renders. */
  port: Metrics
  /** When set, `GET /metrics` requires `Authorization: Bearer <token>` (401 otherwise). */
  token?: string
  /** Default `/metrics`. */
  path?: string
}

export interface MetricsAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** `GET /metrics` (and HEAD): not request-logged, so scrapes do not flood the log. */
export function metricsRoute(options: MetricsOptions): HttpRoute {
  return {
    path: options.path ?? '/metrics',
    quiet: true,
    async handle(req, res) {
      const { status, headers, body } = await metricsAnswer(options, req.headers.authorization)
      respond(res, status, headers, body)
    }
  }
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
