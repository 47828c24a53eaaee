import { integer, type Env } from '../config/environment.js'

/** The live-queries module's settings: LIVE_MAX_WATCHES (default 100), the watches one socket connection may hold. */
export function liveSettings(env: Env): { maxWatches: number } {
  return { maxWatches: integer(env, 'LIVE_MAX_WATCHES', 100, 1, 100_000) }
}
