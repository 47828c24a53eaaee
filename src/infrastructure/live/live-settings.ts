import { duration, integer, type Env } from '../config/environment.js'

/**
 * The live-queries module's settings: LIVE_MAX_WATCHES (default 100), the watches one socket connection may hold;
 * LIVE_KEEP_VIEWS (default 10s, 0 for never), how long a view outlives its last watch, so that a reconnect's
 * resume on this instance finds it current instead of reading the store again.
 */
export function liveSettings(env: Env): { maxWatches: number; keepViewsMs: number } {
  return {
    maxWatches: integer(env, 'LIVE_MAX_WATCHES', 100, 1, 100_000),
    keepViewsMs: env.LIVE_KEEP_VIEWS === '0' ? 0 : duration(env, 'LIVE_KEEP_VIEWS', '10s')
  }
}
