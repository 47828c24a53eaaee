import type { EventHistory } from '../../domain/realtime/event-history.js'
import { coreOf } from '../app-core.js'
import type { AroundHook, HookMap } from '../hook-context.js'

/** How long a write's offset waits for this process to follow the log past the write. */
const FENCE_WAIT_MS = 5_000

/**
 * Read your writes (docs/wire-protocol.md, ADR 0020): a write whose query carries `$offset: true` (or 'true', from a
 * URL) has `context.http.offset`, which its transport calls once the call's events were emitted: an offset at or after
 * them — the call's events handed to publication, a history over a shared log reading the log past the write first,
 * then the history's head; undefined when the history cannot tell (not followed that far within 5 s). The member is
 * taken out of the query by this app hook: service hooks and services never see it (app hooks registered before the
 * modules' do). With recovery off the live-queries module takes it out (there are no offsets then).
 */
export function writeOffsetHooks(history: EventHistory, app: object): HookMap {
  const events = coreOf(app).serviceEvents
  // Never rejects (the transports answer the call either way): undefined when it cannot tell.
  const offset = async (): Promise<string | undefined> => {
    try {
      await events.idle()
      if (history.settled && !(await history.settled(FENCE_WAIT_MS))) return undefined
      await events.idle()
      return history.head()
    } catch {
      return undefined
    }
  }
  const around: AroundHook = (context, next) => {
    const query = context.params.query
    if (query === undefined || !Object.hasOwn(query, '$offset')) return next()
    const asked = query.$offset === true || query.$offset === 'true'
    delete query.$offset
    if (asked) context.http.offset = offset
    return next()
  }
  return { around: { create: [around], update: [around], patch: [around], remove: [around] } }
}
