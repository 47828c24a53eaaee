import type { RequestHandler } from 'express'
import { healthReport, type HealthOptions } from '../http/health.js'

/** `GET /health` (and HEAD) on express: src/interfaces/http/health.ts decides the answer. */
export function healthCheck(options: HealthOptions): RequestHandler {
  return async (req, res, next) => {
    if (req.path !== '/health' || (req.method !== 'GET' && req.method !== 'HEAD')) return next()
    const { status, report } = await healthReport(options)
    res.status(status).set('Cache-Control', 'no-store').json(report)
  }
}
