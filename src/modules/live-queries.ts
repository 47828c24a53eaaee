import { LiveQueries } from '../application/live/index.js'
import type { AroundHook } from '../application/hook-context.js'
import { Logger } from '../domain/logger.js'
import { Metrics } from '../domain/metrics.js'
import { EventHistory } from '../domain/realtime/event-history.js'
import { liveSettings } from '../infrastructure/live/live-settings.js'
import { liveSocketEvents } from '../interfaces/live/index.js'
import type { PlumageModule } from './module.js'

/**
 * LIVE_QUERIES (default true): socket clients `watch` a query and are sent every change of its result (README
 * "Live queries", ADR 0019). Identical watches share one view; with the recovery module's event history a watch
 * resumes from the offset its client last applied. LIVE_MAX_WATCHES (default 100): the watches of one connection;
 * LIVE_KEEP_VIEWS (default 10s, 0 for never): how long a view outlives its last watch.
 */
const SETTINGS = Symbol.for('LiveSettings')

export const module: PlumageModule = {
  bind(container, { env }) {
    container.bind<ReturnType<typeof liveSettings>>(SETTINGS).toConstantValue(liveSettings(env))
  },
  extend(app, container) {
    const logger = container.get<Logger>(Logger)
    const live = new LiveQueries(app, {
      ...container.get<ReturnType<typeof liveSettings>>(SETTINGS),
      ...(container.isBound(EventHistory) ? { history: container.get<EventHistory>(EventHistory) } : {}),
      failed: (error) => logger.warn('a live query could not read its result again; retrying', { error })
    })
    app.extend(live)
    // Without connection recovery there are no offsets: a write's `$offset` is only taken out of its query.
    if (!container.isBound(EventHistory)) {
      const drop: AroundHook = (context, next) => (delete context.params.query?.$offset, next())
      app.hooks({ around: { create: [drop], update: [drop], patch: [drop], remove: [drop] } })
    }
    // With the metrics module: what the views of this instance hold, at each scrape of /metrics.
    const metrics = container.isBound(Metrics) ? container.get<Metrics>(Metrics) : undefined
    metrics?.gauge?.(
      'plumage_live_views',
      'Live query views on this instance (shared by identical watches).',
      () => live.size.views
    )
    metrics?.gauge?.(
      'plumage_live_idle_views',
      'Live query views kept a while after their last watch left (a reconnect resumes into them without a read).',
      () => live.size.idle
    )
    metrics?.gauge?.(
      'plumage_live_watches',
      'Live query watches of the connections of this instance.',
      () => live.size.watches
    )
    metrics?.gauge?.(
      'plumage_live_view_records',
      'Records held by the live query views of this instance (windows, rows before them and buffers).',
      () => live.size.records
    )
    container.bind<LiveQueries>(LiveQueries).toConstantValue(live)
  },
  realtime: (container) => ({ socketEvents: liveSocketEvents(container.get<LiveQueries>(LiveQueries)) })
}
