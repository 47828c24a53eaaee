import type { Clock } from '../../domain/clock.js'
import type { EventHistory, PublishedEvent, RecordedEvent } from '../../domain/realtime/event-history.js'

/** What the history needs of the event log (EventLog): its order and where this process is in it. */
export interface LogPosition {
  /** The log's epoch; undefined before its setup. */
  readonly epoch: string | undefined
  /** The number this process started following after. */
  readonly startedAfter: number | undefined
  /** The last number this process handed out in order. */
  readonly position: number | undefined
  /** The number of the event being handed out right now, if any. */
  readonly delivering: number | undefined
  /** Resolves true once the position reaches `seq`, false when it has not within `timeoutMs`. */
  whenAt(seq: number, timeoutMs: number): Promise<boolean>
}

export interface RethinkDbEventHistoryOptions {
  log: LogPosition
  clock: Clock
  /** How long events are kept (historyRetentionMs of the recovery window). */
  retentionMs: number
  /** Most events kept: a burst bigger than this within the retention makes older offsets unknown. */
  maxEvents?: number
  /** How long `since` waits for this process to reach an offset given out by a faster instance (default 5 s). */
  catchUpMs?: number
}

/** A place in the history: the log's number, and the rank among the events published at it. */
interface Place {
  seq: number
  rank: number
}

interface Entry extends RecordedEvent, Place {
  at: number
}

/**
 * The event history over the RethinkDB event log: offsets are places in the log's one order
 * (`<epoch>.<seq>`), the same on every instance, so a client may resume on any of them.
 *
 * Every instance follows the whole log and publishes every event; `append` is called while the log
 * hands an event out, and answers that event's number. Each process keeps what it published (data
 * as published: protected fields already removed, and the publishing context) in memory for the
 * retention, so `since` answers what the events were published as, not raw log rows. An offset is
 * known when this process has followed the log since before it and has not pruned past it: an
 * instance started after a client's offset answers `'unknown'` (the client refetches). An offset a
 * faster instance gave out that this one has not reached yet is waited for (`catchUpMs`), so that no
 * event is replayed and then delivered live again.
 *
 * Events published outside the log (a service without a live store) rank after the log event they
 * follow (`<epoch>.<seq>.<rank>`): recoverable on this instance only.
 */
export class RethinkDbEventHistory implements EventHistory {
  private readonly maxEvents: number
  private readonly catchUpMs: number
  private entries: Entry[] = []
  private start = 0
  /** The place of the last pruned event: offsets before it lost events. */
  private pruned?: Place
  /** The last place handed out by `append`. */
  private last?: Place

  constructor(private readonly options: RethinkDbEventHistoryOptions) {
    this.maxEvents = options.maxEvents ?? 100_000
    this.catchUpMs = options.catchUpMs ?? 5_000
  }

  append(event: PublishedEvent): string {
    const place = this.next()
    this.last = place
    const offset = this.offsetOf(place)
    this.entries.push({ ...event, offset, ...place, at: this.options.clock.now() })
    this.prune()
    return offset
  }

  head(): string {
    const position = this.options.log.position ?? 0
    return this.offsetOf(this.last && this.last.seq === position ? this.last : { seq: position, rank: 0 })
  }

  async since(offset: string): Promise<RecordedEvent[] | 'unknown'> {
    const { epoch, startedAfter } = this.options.log
    const place = epoch === undefined ? undefined : placeOf(offset, epoch)
    if (!place || startedAfter === undefined || place.seq < startedAfter) return 'unknown'
    if (!(await this.options.log.whenAt(place.seq, this.catchUpMs))) return 'unknown'
    this.prune()
    if (this.pruned && before(place, this.pruned)) return 'unknown'
    const events: RecordedEvent[] = []
    for (let index = this.entries.length - 1; index >= this.start; index--) {
      const entry = this.entries[index]!
      if (!before(place, entry)) break
      const { path, event, data, context, offset: at } = entry
      events.push(
        context === undefined ? { path, event, data, offset: at } : { path, event, data, context, offset: at }
      )
    }
    return events.reverse()
  }

  /**
   * The place of an event published now: the first one published while the log hands out number
   * `n` is `n` itself; any other (a second service on the table, an event from outside the log)
   * ranks after the last place given out.
   */
  private next(): Place {
    const { delivering, position } = this.options.log
    const seq = position ?? 0
    if (delivering !== undefined && delivering === seq && !(this.last && this.last.seq === seq)) return { seq, rank: 0 }
    return this.last && this.last.seq === seq ? { seq, rank: this.last.rank + 1 } : { seq, rank: 1 }
  }

  private offsetOf({ seq, rank }: Place): string {
    const at = `${this.options.log.epoch ?? '-'}.${seq.toString(36)}`
    return rank === 0 ? at : `${at}.${rank.toString(36)}`
  }

  private prune(): void {
    const oldest = this.options.clock.now() - this.options.retentionMs
    while (
      this.start < this.entries.length &&
      (this.entries.length - this.start > this.maxEvents || this.entries[this.start]!.at < oldest)
    ) {
      const { seq, rank } = this.entries[this.start]!
      this.pruned = { seq, rank }
      this.start++
    }
    if (this.start > 1024 && this.start * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.start)
      this.start = 0
    }
  }
}

/** `a` comes before `b` in the log's order. */
function before(a: Place, b: Place): boolean {
  return a.seq < b.seq || (a.seq === b.seq && a.rank < b.rank)
}

/** The place an offset of this epoch names, or undefined for anything else. */
function placeOf(offset: string, epoch: string): Place | undefined {
  const parts = offset.split('.')
  if (parts.length < 2 || parts.length > 3 || parts[0] !== epoch) return undefined
  const seq = base36(parts[1]!)
  const rank = parts.length === 3 ? base36(parts[2]!) : 0
  return seq === undefined || rank === undefined || (parts.length === 3 && rank === 0) ? undefined : { seq, rank }
}

function base36(digits: string): number | undefined {
  const value = /^[0-9a-z]{1,11}$/.test(digits) ? parseInt(digits, 36) : NaN
  return Number.isSafeInteger(value) && value.toString(36) === digits ? value : undefined
}
