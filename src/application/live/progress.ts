/** When a connection is told how far its watches are current (LiveQueriesOptions.progress). */
export interface ProgressOptions {
  /** How often connections are looked at (ms; 0: never, no timer). */
  everyMs: number
  /** A connection whose least recent frame is this many events behind is told at once. */
  events: number
  /** Otherwise one behind by any event is told after this long (ms). */
  maxAgeMs: number
}

export const DEFAULT_PROGRESS: ProgressOptions = { everyMs: 1_000, events: 2_000, maxAgeMs: 30_000 }

/** A point of the event feed: an offset, and the number of events observed up to it. */
export interface FeedPoint {
  offset: string
  count: number
}

/** A watch as progress sees it: the events observed up to the last frame it was sent (or its answer). */
export interface ProgressWatch {
  sent: number
}

/**
 * Progress frames (ADR 0019, Resume). A watch's offset moves only with its own frames, so a quiet watch resumes
 * from an old offset: the server replays every event of its service since, and past the event history's window
 * the client gets a reset although it was away a second. So a connection whose watches lag is sent
 * `{ offset }`: every watch it holds is current at that offset — each was sent every frame up to it and none after.
 *
 * Each watch is current at a point of the feed: its service's (the head, or with writes of the service still on
 * their way to the views, the point before the first of them), unless its view is reading. A connection is told
 * the earliest of its watches' points, when no watch was sent a frame past it. So steady writes to a service with
 * event resolvers — its queue is never empty — do not hold progress back. When it cannot be (a view reading),
 * each current watch that lags is told its own point: `{ id, offset, changes: [] }`.
 */
export class ConnectionProgress<C> {
  /** Per connection: the point and time of its last progress frame. */
  private readonly told = new Map<C, { sent: number; at: number }>()

  constructor(
    private readonly options: ProgressOptions,
    private readonly now: () => number = Date.now
  ) {}

  /**
   * Calls `send` with a point for each connection that lags behind the `observed` events and whose watches are all
   * current at it (`current`: a watch's point, undefined while it is not current anywhere); its watches then count
   * as sent there. A lagging connection that cannot be told so (a watch mid-read, or one sent a frame past the
   * others' point) has each of its current watches that lags told its own point through `sendWatch` instead: a
   * connection with hundreds of watches is rarely without one reading under load, and its quiet watches' offsets
   * would otherwise grow older than the event history.
   */
  tell<W extends ProgressWatch>(
    connections: Iterable<readonly [C, Map<unknown, W>]>,
    observed: number,
    current: (watch: W) => FeedPoint | undefined,
    send: (connection: C, watches: Map<unknown, W>, point: FeedPoint) => void,
    sendWatch: (watch: W, point: FeedPoint) => void
  ): void {
    const now = this.now()
    for (const [connection, watches] of connections) {
      let told = this.told.get(connection)
      if (!told) this.told.set(connection, (told = { sent: 0, at: now }))
      let oldest = observed
      for (const watch of watches.values()) oldest = Math.min(oldest, Math.max(watch.sent, told.sent))
      if (oldest === observed) continue
      const old = now - told.at >= this.options.maxAgeMs
      if (observed - oldest < this.options.events && !old) continue
      const point = earliest(watches, current)
      if (point && point.count > told.sent) {
        send(connection, watches, point)
        for (const watch of watches.values()) watch.sent = point.count
        this.told.set(connection, { sent: point.count, at: now })
        continue
      }
      for (const watch of watches.values()) {
        const sent = Math.max(watch.sent, told.sent)
        const at = current(watch)
        if (!at || at.count <= sent || (observed - sent < this.options.events && !old)) continue
        sendWatch(watch, at)
        watch.sent = at.count
      }
      // Each current watch was told: the age counts from now (a watch mid-read still lags, and is told when current).
      if (old) told.at = now
    }
  }

  forget(connection: C): void {
    this.told.delete(connection)
  }
}

/** The earliest point every watch is current at, if none was sent a frame past it. */
function earliest<W extends ProgressWatch>(
  watches: Map<unknown, W>,
  current: (watch: W) => FeedPoint | undefined
): FeedPoint | undefined {
  let point: FeedPoint | undefined
  let latest = 0
  for (const watch of watches.values()) {
    const at = current(watch)
    if (!at) return undefined
    if (!point || at.count < point.count) point = at
    latest = Math.max(latest, watch.sent)
  }
  return point && latest <= point.count ? point : undefined
}
