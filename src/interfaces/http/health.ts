import type { StoreHealth } from '../../domain/store/store-factory.js'
import { respond, type HttpRoute } from './http-extension.js'

export interface HealthOptions {
  /** The app's version, reported as is (the composition root reads it from package.json). */
  version: string
  /** The store's readiness; must resolve rather than reject or hang (a rejection counts as not ready). */
  check: () => Promise<StoreHealth>
}

export interface HealthReport {
  status: 'ok' | 'degraded'
  /** Each part of the store that was checked: e.g. `{ reachable, writable, feeds }`. */
  store: Record<string, boolean>
  version: string
  /** What is not ready, when something is not. */
  problems?: string[]
}

/**
 * What `GET /health` answers, for container probes: 200 `{status:'ok'}` while the store is ready (for
 * RethinkDB: reachable, every table accepts writes and every change feed is live), 503
 * `{status:'degraded'}` with the parts that are not, so an orchestrator stops routing traffic to an
 * instance that would lose real-time events, without restarting a process that recovers by itself.
 * No authentication: it reveals nothing but readiness and the version. Sent with `Cache-Control: no-store`.
 */
export async function healthReport({
  version,
  check
}: HealthOptions): Promise<{ status: 200 | 503; report: HealthReport }> {
  const health = await check().catch((): StoreHealth => ({
    ready: false,
    checks: { reachable: false },
    problems: ['the store did not answer']
  }))
  const report: HealthReport = { status: health.ready ? 'ok' : 'degraded', store: health.checks, version }
  if (!health.ready) report.problems = health.problems
  return { status: health.ready ? 200 : 503, report }
}

/** `GET /health` (and HEAD), mounted by both engines like an extension's route: not request-logged. */
export function healthRoute(options: HealthOptions): HttpRoute {
  return {
    path: '/health',
    quiet: true,
    async handle(_req, res) {
      const { status, report } = await healthReport(options)
      const headers = { 'Cache-Control': 'no-store', 'Content-Type': 'application/json; charset=utf-8' }
      respond(res, status, headers, JSON.stringify(report))
    }
  }
}
