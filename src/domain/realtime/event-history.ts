import type { NullableId, Params } from '../service/service.js'

/**
 * What a publisher saw of the call that caused an event, kept so that the event can be published
 * again to a connection that missed it (`app.publish((data, context) => …)` runs on this, with the
 * app and the service put back). Only plain data: no connection, no headers, no access token, and
 * not the call's input data (it may hold a password).
 */
export interface PublishedContext {
  path: string
  method: string
  event: string
  id?: NullableId
  /** What external callers received (the `protect`ed result). */
  result?: unknown
  /** The call's provider, user, query and route. */
  params: Pick<Params, 'provider' | 'user' | 'query' | 'route' | 'authenticated'>
}

/** A service event as it was published, before the channels picked who receives it. */
export interface PublishedEvent {
  /** The service's registered path. */
  path: string
  event: string
  data: unknown
  /** Undefined for events that came from a live store's change stream rather than from a call. */
  context?: PublishedContext
}

/** A published event and its place in the history. */
export interface RecordedEvent extends PublishedEvent {
  offset: string
}

/**
 * The recent service events of the app, in the order they were published, so that a client whose
 * connection dropped receives what it missed (socket.io connection state recovery). An offset is
 * opaque to everyone but the adapter; clients hand back the last one they saw.
 */
export interface EventHistory {
  /**
   * Records an event and answers its offset. Synchronous: a live delivery carries the offset of its
   * event, and must not wait for it (an adapter over a shared log answers the position the log
   * already gave the event).
   */
  append(event: PublishedEvent): string
  /**
   * The offset of the latest event this process has recorded (or of the empty history): a client
   * given it has seen everything so far. Synchronous, so that no delivery can slip in between
   * reading it and handing it to a client (which would move the client's offset back).
   */
  head(): string
  /**
   * The events after `offset`, oldest first; `'unknown'` when the history cannot say: the offset was
   * never given out (another process, another epoch of the history) or events after it were pruned.
   */
  since(offset: string): Promise<RecordedEvent[] | 'unknown'>
  /**
   * Read your writes (ADR 0020): resolves true once this process has recorded every event up to `offset` (at once
   * when it has), false when it cannot place the offset (another epoch) or has not reached it within `timeoutMs`.
   */
  reached?(offset: string, timeoutMs: number): Promise<boolean>
  /**
   * Read your writes: resolves true once every event of the writes committed before the call is recorded here, so
   * that `head()` is at or after them (a history over a shared log reads the log); false after `timeoutMs`. A history
   * whose events are recorded as they are written (memory) need not have it.
   */
  settled?(timeoutMs: number): Promise<boolean>
  /**
   * `since` for a caller that follows some services: a shared log may tell it more (OrderedLogHistory). Rejects
   * (Unavailable) for an offset this process has not reached yet: the caller tries again, no reset is due.
   */
  sinceFor?(
    offset: string,
    paths: readonly string[],
    concerns: (event: PublishedEvent) => boolean
  ): Promise<RecordedEvent[] | 'unknown'>
}
export const EventHistory = Symbol.for('EventHistory')
