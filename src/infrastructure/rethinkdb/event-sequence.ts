/** What the sequence needs of a log row: its place in the log. */
export interface Sequenced {
  /** The row's first number, given by the write that logged it (numbers run 1, 2, 3, … per log). */
  id: number
}

export interface EventSequenceOptions<T extends Sequenced> {
  /** How long a missing number holds back the events after it before it is given up (default 5 s). */
  gapMs?: number
  /** How many numbers a row holds, from its `id` on (default 1): one write logs all its events in one row. */
  span?(entry: T): number
  /** Hands out one row: in order (`late` false), or one that came after its number was given up. */
  release(entry: T, late: boolean): void
  /** Numbers `from`..`to` were given up: nothing came for them within `gapMs`. */
  skipped(from: number, to: number): void
}

/** Given-up numbers remembered so that their event, if it still comes, is handed out once. */
const MAX_SKIPPED = 10_000

/**
 * The exactly-once, in-order rules of following the event log, apart from any database. Every
 * logged event carries a number taken from the log's counter by the query that wrote it, so the
 * log has one total order, the same on every instance; a row holds the consecutive numbers of one
 * write's events (`span`), and is handed out as a whole. Events come from the changefeed in commit
 * order, which can differ from number order (two writes take 7 and 8; 8 commits first) and, after a
 * re-opened cursor, again: each number is handed out once, in number order. A number that never
 * comes (a query that died between taking it and logging its event, or an event pruned while this
 * instance was cut off) holds the ones after it back for `gapMs` only, then is given up; should its
 * event come after all, it is handed out then, late, and still once.
 */
export class EventSequence<T extends Sequenced> {
  private readonly gapMs: number
  private readonly span: (entry: T) => number
  private readonly held = new Map<number, T>()
  private readonly givenUp = new Set<number>()
  /** The next number to hand out; undefined before `startAfter`. */
  private next?: number
  private live = false
  private timer?: ReturnType<typeof setTimeout>

  constructor(private readonly options: EventSequenceOptions<T>) {
    this.gapMs = options.gapMs ?? 5_000
    this.span = options.span ?? (() => 1)
  }

  /** Whether the sequence has a starting point (the follower opened once). */
  get started(): boolean {
    return this.next !== undefined
  }

  /** Whether events are held back, waiting for a missing number before them. */
  get holding(): boolean {
    return this.held.size > 0
  }

  /** The last number handed out in order (or the starting point); undefined before the start. */
  get position(): number | undefined {
    return this.next === undefined ? undefined : this.next - 1
  }

  /** The first cursor starts after the log's current number: earlier events predate this follower. */
  startAfter(seq: number): void {
    this.next = seq + 1
  }

  /** An event from the current cursor (initial or live). */
  add(entry: T): void {
    if (this.next === undefined) return
    const seq = entry.id
    if (seq < this.next) {
      if (this.givenUp.delete(seq)) this.options.release(entry, true)
      return
    }
    if (this.held.has(seq)) return
    this.held.set(seq, entry)
    this.drain()
  }

  /**
   * Whether the cursor is live (past its initial rows). Gaps are only timed while it is: a cursor
   * still sending its initial rows, or re-opening, may yet bring the missing numbers.
   */
  setLive(live: boolean): void {
    this.live = live
    if (!live) this.disarm()
    else this.arm()
  }

  /** Forgets everything (the follower stopped; a later start begins anew). */
  reset(): void {
    this.disarm()
    this.held.clear()
    this.givenUp.clear()
    this.next = undefined
    this.live = false
  }

  private drain(): void {
    while (this.next !== undefined && this.held.has(this.next)) {
      const entry = this.held.get(this.next)!
      this.held.delete(this.next)
      this.next += this.span(entry)
      this.options.release(entry, false)
    }
    if (this.held.size === 0) this.disarm()
    else this.arm()
  }

  private arm(): void {
    if (this.timer || !this.live || this.held.size === 0) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.skipGap()
    }, this.gapMs)
    this.timer.unref?.()
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  /** Gives up the missing numbers before the lowest held one, and hands out what follows. */
  private skipGap(): void {
    if (this.next === undefined || this.held.size === 0) return
    const lowest = Math.min(...this.held.keys())
    const from = this.next
    for (let seq = Math.max(from, lowest - MAX_SKIPPED); seq < lowest; seq++) {
      // The oldest given-up numbers are forgotten first (a Set iterates in insertion order).
      if (this.givenUp.size >= MAX_SKIPPED) this.givenUp.delete(this.givenUp.values().next().value!)
      this.givenUp.add(seq)
    }
    this.next = lowest
    this.options.skipped(from, lowest - 1)
    this.drain()
  }
}
