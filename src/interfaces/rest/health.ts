import type { RequestHandler } from 'express'

export interface HealthOptions {
  /** The app's version, reported as is (the composition root reads it from package.json). */
  version: string
  /** Whether the store answers; must resolve (false) rather than reject or hang. */
  ping: () => Promise<boolean>
}

export interface HealthReport {
  status: 'ok' | 'degraded'
  store: { reachable: boolean }
  version: string
}

/**
 * `GET /health` for container probes: 200 `{status:'ok'}` while the store answers, 503
 * `{status:'degraded'}` when it does not, so an orchestrator stops routing traffic without
 * restarting a process that will recover by itself once the database is back. No authentication:
 * it reveals nothing but reachability and the version.
 */
export function healthCheck({ version, ping }: HealthOptions): RequestHandler {
  return async (req, res, next) => {
    if (req.path !== '/health' || (req.method !== 'GET' && req.method !== 'HEAD')) return next()
    const reachable = await ping().catch(() => false)
    const report: HealthReport = { status: reachable ? 'ok' : 'degraded', store: { reachable }, version }
    res.status(reachable ? 200 : 503).set('Cache-Control', 'no-store').json(report)
  }
}
