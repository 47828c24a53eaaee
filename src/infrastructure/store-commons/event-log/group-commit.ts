/** One caller's part of a batch, and how it ends. */
interface Call<I, O, K> {
  items: I[]
  tag: K | undefined
  resolve(outcome: O): void
  reject(error: unknown): void
}

export interface GroupCommitOptions<I, O, K = never> {
  /**
   * Runs one query (one transaction) for several callers' items (`calls[i]` are caller i's) and
   * answers one outcome per caller, in order. A rejection fails every caller of the batch: a caller
   * that must fail alone gets an outcome that says so (PostgresStore's `{ error }`). `tags[i]` is what caller i
   * submitted with its items (RethinkDbStore: a keyed create's key), undefined when nothing.
   */
  run(calls: I[][], tags: (K | undefined)[]): Promise<O[]>
  /** Most items in one query (default 500); a caller's items are never split. */
  maxItems?: number
  /** Queries in flight at once (default 1). */
  maxInFlight?: number
  /**
   * A write sent before the group was made, still in flight: it counts as one of the group's queries
   * until it settles, so the calls that come meanwhile wait for it and go out together.
   */
  inFlight?: Promise<unknown>
}

/**
 * Group commit, for any store: calls that arrive while a query of theirs is in flight wait for it and
 * then go out together as the next query. One writer gets its own query at once (no added latency);
 * many writers share queries, so the per-query cost is paid once per batch instead of once per call —
 * on RethinkDB the round trip, the event log's counter update and log insert (RethinkDbStore's
 * creates), on PostgreSQL the commit's WAL flush (PostgresWrites). Each caller gets its own outcome.
 *
 * When a query ends, the next one waits for the rest of this event-loop turn: the callers it just
 * answered usually submit their next call within it, and going at once would send the first of them
 * alone and make the others wait a whole query (batches of 1, 15, 1, 15… with 16 writers).
 */
export class GroupCommit<I, O, K = never> {
  private readonly queue: Call<I, O, K>[] = []
  private readonly maxItems: number
  private readonly maxInFlight: number
  private inFlight = 0
  /** A pump is due at the end of this turn: submits leave the queue to it. */
  private deferred = false

  constructor(private readonly options: GroupCommitOptions<I, O, K>) {
    this.maxItems = options.maxItems ?? 500
    this.maxInFlight = options.maxInFlight ?? 1
    if (options.inFlight) {
      this.inFlight++
      void options.inFlight.then(
        () => this.ended(),
        () => this.ended()
      )
    }
  }

  submit(items: I[], tag?: K): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ items, tag, resolve, reject })
      if (!this.deferred) this.pump()
    })
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.take()
      this.inFlight++
      void this.options
        .run(
          batch.map((call) => call.items),
          batch.map((call) => call.tag)
        )
        .then(
          (outcomes) => batch.forEach((call, index) => call.resolve(outcomes[index]!)),
          (error: unknown) => batch.forEach((call) => call.reject(error))
        )
        .finally(() => this.ended())
    }
  }

  /** A query ended: the next goes at the end of this turn (see the class's comment). */
  private ended(): void {
    this.inFlight--
    if (this.deferred) return
    this.deferred = true
    setImmediate(() => {
      this.deferred = false
      this.pump()
    })
  }

  /** The calls of the next query: the oldest first, as many as fit in `maxItems` (at least one). */
  private take(): Call<I, O, K>[] {
    let count = this.queue[0]!.items.length
    let calls = 1
    while (calls < this.queue.length && count + this.queue[calls]!.items.length <= this.maxItems)
      count += this.queue[calls++]!.items.length
    return this.queue.splice(0, calls)
  }
}
