import type { RequestHandler } from 'express'
import { metricsAnswer, type MetricsOptions } from '../http/metrics.js'

/** `GET /metrics` (and HEAD) on express: src/interfaces/http/metrics.ts decides the answer. */
export function metricsEndpoint(options: MetricsOptions): RequestHandler {
  const path = options.path ?? '/metrics'
  return async (req, res, next) => {
    if (req.path !== path || (req.method !== 'GET' && req.method !== 'HEAD')) return next()
    const { status, headers, body } = await metricsAnswer(options, req.headers.authorization)
    res.status(status).set(headers).send(body)
  }
}
