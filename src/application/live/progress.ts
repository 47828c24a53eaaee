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

/** A watch as progress sees it: the number of events observed when it was last sent a frame (or its answer). */
export interface ProgressWatch {
  sent: number
}

/**
 * Progress frames (ADR 0019, Resume). A watch's offset moves only with its own frames, so a quiet watch resumes
 * from an old offset: the server replays every event of its service since, and past the event history's window
 * the client gets a reset although it was away a second. So a connection whose watches lag is sent
 * `{ offset }` — every watch it holds is current at that offset — but only at a moment when that is true: each of
 * its watches in step, its view with no read and no write pending, so every frame up to the offset went before.
 */
export class ConnectionProgress<C> {
  /** Per connection: the event count and time of its last progress frame. */
  private readonly told = new Map<C, { sent: number; at: number }>()

  constructor(
    private readonly options: ProgressOptions,
    private readonly now: () => number = Date.now
  ) {}

  /**
   * Calls `send` for each connection that lags behind the `observed` events and whose watches are all `current`
   * (every frame up to the head went to them): it sends the head, and its watches count as sent there.
   */
  tell<W extends ProgressWatch>(
    connections: Iterable<readonly [C, Map<unknown, W>]>,
    observed: number,
    current: (watch: W) => boolean,
    send: (connection: C, watches: Map<unknown, W>) => void
  ): void {
    const now = this.now()
    for (const [connection, watches] of connections) {
      let told = this.told.get(connection)
      if (!told) this.told.set(connection, (told = { sent: 0, at: now }))
      let oldest = observed
      for (const watch of watches.values()) oldest = Math.min(oldest, Math.max(watch.sent, told.sent))
      if (oldest === observed) continue
      if (observed - oldest < this.options.events && now - told.at < this.options.maxAgeMs) continue
      if (![...watches.values()].every(current)) continue
      send(connection, watches)
      for (const watch of watches.values()) watch.sent = observed
      this.told.set(connection, { sent: observed, at: now })
    }
  }

  forget(connection: C): void {
    this.told.delete(connection)
  }
}
