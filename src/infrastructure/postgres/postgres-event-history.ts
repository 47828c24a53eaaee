import type { Clock } from '../../domain/clock.js'
import type { EventHistory, PublishedEvent, RecordedEvent } from '../../domain/realtime/event-history.js'
import type { LogPlace } from './postgres-event-log.js'

/** What the history needs of the event log (PostgresEventLog): its order and where this process is in it. */
export interface LogPosition {
  readonly epoch: string | undefined
  readonly startedAfter: LogPlace | undefined
  readonly position: LogPlace | undefined
  readonly delivering: LogPlace | undefined
  /** Resolves true once the position reaches `place`, false when it has not within `timeoutMs`. */
  whenAt(place: LogPlace, timeoutMs: number): Promise<boolean>
}

export interface PostgresEventHistoryOptions {
  log: LogPosition
  clock: Clock
  /** How long events are kept (historyRetentionMs of the recovery window). */
  retentionMs: number
  /** Most events kept: a burst bigger than this within the retention makes older offsets unknown. */
  maxEvents?: number
  /** How long `since` waits for this process to reach an offset given out by a faster instance (default 5 s). */
  catchUpMs?: number
}

/** A place in the history: the log's place, and the rank among the events published at it. */
interface Place extends LogPlace {
  rank: number
}

interface Entry extends RecordedEvent, Place {
  at: number
}

/**
 * The event history over the PostgreSQL event log: offsets are places in the log's one order
 * (`<epoch>.<tx>.<id>`, base 36), the same on every instance, so a client may resume on any of them.
 *
 * Every instance follows the whole log and publishes every event; `append` is called while the log
 * hands an event out, and answers that event's place. Each process keeps what it published (data as
 * published: protected fields removed, and the publishing context) in memory for the retention.
 * An offset is known when this process has followed the log since before it and has not pruned past
 * it. An offset from a faster instance that this one has not reached yet is waited for (`catchUpMs`),
 * so that nothing is replayed and then delivered live again. Events published outside the log (a
 * service without a live store) rank after the log event they follow (`<epoch>.<tx>.<id>.<rank>`):
 * recoverable on this instance only.
 */
export class PostgresEventHistory implements EventHistory {
  private readonly maxEvents: number
  private readonly catchUpMs: number
  private entries: Entry[] = []
  private start = 0
  private pruned?: Place
  private last?: Place

  constructor(private readonly options: PostgresEventHistoryOptions) {
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
    const position = this.options.log.position ?? { tx: 0n, id: 0n }
    return this.offsetOf(this.last && samePlace(this.last, position) ? this.last : { ...position, rank: 0 })
  }

  async since(offset: string): Promise<RecordedEvent[] | 'unknown'> {
    const { epoch, startedAfter, position } = this.options.log
    const place = epoch === undefined ? undefined : placeOf(offset, epoch)
    if (!place || !startedAfter || !position || before(place, { ...startedAfter, rank: 0 })) return 'unknown'
    if (before({ ...position, rank: Infinity }, place) && !(await this.options.log.whenAt(place, this.catchUpMs)))
      return 'unknown'
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

  /** The first event published while the log hands out a place is that place; any other ranks after the last. */
  private next(): Place {
    const { delivering, position } = this.options.log
    const at = position ?? { tx: 0n, id: 0n }
    const lastHere = this.last && samePlace(this.last, at)
    if (delivering && samePlace(delivering, at) && !lastHere) return { ...at, rank: 0 }
    return lastHere ? { ...at, rank: this.last!.rank + 1 } : { ...at, rank: 1 }
  }

  private offsetOf({ tx, id, rank }: Place): string {
    const at = `${this.options.log.epoch ?? '-'}.${tx.toString(36)}.${id.toString(36)}`
    return rank === 0 ? at : `${at}.${rank.toString(36)}`
  }

  private prune(): void {
    const oldest = this.options.clock.now() - this.options.retentionMs
    while (
      this.start < this.entries.length &&
      (this.entries.length - this.start > this.maxEvents || this.entries[this.start]!.at < oldest)
    ) {
      const { tx, id, rank } = this.entries[this.start]!
      this.pruned = { tx, id, rank }
      this.start++
    }
    if (this.start > 1024 && this.start * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.start)
      this.start = 0
    }
  }
}

function samePlace(a: LogPlace, b: LogPlace): boolean {
  return a.tx === b.tx && a.id === b.id
}

/** `a` comes before `b` in the log's order. */
function before(a: Place, b: Place): boolean {
  if (a.tx !== b.tx) return a.tx < b.tx
  if (a.id !== b.id) return a.id < b.id
  return a.rank < b.rank
}

/** The place an offset of this epoch names, or undefined for anything else. */
function placeOf(offset: string, epoch: string): Place | undefined {
  const parts = offset.split('.')
  if (parts.length < 3 || parts.length > 4 || parts[0] !== epoch) return undefined
  const tx = base36(parts[1]!)
  const id = base36(parts[2]!)
  const rank = parts.length === 4 ? base36(parts[3]!) : 0n
  if (tx === undefined || id === undefined || rank === undefined || (parts.length === 4 && rank === 0n))
    return undefined
  return rank > 1_000_000n ? undefined : { tx, id, rank: Number(rank) }
}

function base36(digits: string): bigint | undefined {
  if (!/^[0-9a-z]{1,13}$/.test(digits)) return undefined
  let value = 0n
  for (const digit of digits) value = value * 36n + BigInt(parseInt(digit, 36))
  return value.toString(36) === digits ? value : undefined
}
