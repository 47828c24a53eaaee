/** What the replay needs of a logged event. */
export interface Replayable {
  id: string
  ts: number
}

/**
 * The exactly-once rules of following the event log, apart from any database: rows of one cursor
 * before its `ready` are held and handed out sorted by time; every id is handed out once, also when a
 * re-opened cursor replays it; `resumeFrom` says where the next cursor starts (the newest time seen
 * minus the look-back). Ids older than twice the look-back before the newest are forgotten: a
 * replay cannot bring them back.
 */
export class EventReplay<T extends Replayable> {
  private readonly seen = new Map<string, number>()
  private pruneAt = 10_000
  private held: T[] = []
  private holding = true
  /** Newest `ts` handed out, or the starting point given to `startAt`. */
  private newest?: number

  constructor(private readonly lookbackMs: number) {}

  /** Where the next cursor should start: undefined before the first start. */
  resumeFrom(): number | undefined {
    return this.newest === undefined ? undefined : this.newest - this.lookbackMs
  }

  /** The first cursor starts at the server's `now` (events before it predate this follower). */
  startAt(now: number): void {
    this.newest = now
  }

  /** A cursor ended: its held rows are dropped (the next cursor replays them). */
  lost(): void {
    this.held = []
    this.holding = true
  }

  /** A row of the current cursor: the events to hand out now (none while the cursor initialises). */
  row(entry: T): T[] {
    if (this.holding) {
      this.held.push(entry)
      return []
    }
    return this.fresh(entry) ? [entry] : []
  }

  /** The cursor's `ready`: its held rows, sorted by time, without the ones already handed out. */
  ready(): T[] {
    const rows = this.held.sort((a, b) => a.ts - b.ts)
    this.held = []
    this.holding = false
    return rows.filter((entry) => this.fresh(entry))
  }

  /** Forgets everything (the follower stopped; a later start begins anew). */
  reset(): void {
    this.seen.clear()
    this.held = []
    this.holding = true
    this.newest = undefined
  }

  private fresh(entry: T): boolean {
    if (this.seen.has(entry.id)) return false
    this.seen.set(entry.id, entry.ts)
    if (this.newest === undefined || entry.ts > this.newest) this.newest = entry.ts
    if (this.seen.size > this.pruneAt) this.forgetOld()
    return true
  }

  private forgetOld(): void {
    const cutoff = (this.newest ?? 0) - 2 * this.lookbackMs
    for (const [id, ts] of this.seen) if (ts < cutoff) this.seen.delete(id)
    this.pruneAt = Math.max(10_000, this.seen.size * 2)
  }
}
