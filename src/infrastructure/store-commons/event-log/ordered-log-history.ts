import type { Clock } from '../../../domain/clock.js'
import { Unavailable } from '../../../domain/errors/errors.js'
import type { EventHistory, PublishedEvent, RecordedEvent } from '../../../domain/realtime/event-history.js'

/**
 * The order of a database's event log, as the history needs it: places `P` (a number on RethinkDB, a
 * transaction id and a row number on PostgreSQL), how they compare, and how they read in an offset.
 */
export interface LogOrder<P> {
  /** The place before the first event. */
  readonly origin: P
  /** Negative when `a` comes before `b`, 0 for the same place, positive after. */
  compare(a: P, b: P): number
  /** The place as dot-separated base-36 parts (`fields` of them). */
  encode(place: P): string
  /** The place of `fields` base-36 parts, or undefined when they name none. */
  decode(parts: readonly string[]): P | undefined
  readonly fields: number
}

/** What the history needs of the event log: its order and where this process is in it. */
export interface LogPosition<P> {
  /** The log's epoch; undefined before its setup. */
  readonly epoch: string | undefined
  /** The place this process started following after. */
  readonly startedAfter: P | undefined
  /** The last place this process handed out in order. */
  readonly position: P | undefined
  /** The place of the event being handed out right now, if any. */
  readonly delivering: P | undefined
  /** Resolves true once the position reaches `place`, false when it has not within `timeoutMs`. */
  whenAt(place: P, timeoutMs: number): Promise<boolean>
  /** Resolves true once every event of the writes committed before the call was handed out; false after `timeoutMs`. */
  caughtUp?(timeoutMs: number): Promise<boolean>
}

export interface OrderedLogHistoryOptions<P> {
  log: LogPosition<P>
  order: LogOrder<P>
  clock: Clock
  /** How long events are kept (historyRetentionMs of the recovery window). */
  retentionMs: number
  /** Most events kept: a burst bigger than this within the retention makes older offsets unknown. */
  maxEvents?: number
  /** How long `since` waits for this process to reach an offset given out by a faster instance (default 5 s). */
  catchUpMs?: number
  /**
   * The same wait for `sinceFor` (a live query's resume; default 2 s): shorter than a client's request timeout (5 s),
   * with room for the view's read and the replay, so that the client is answered — a 503 past it, and it tries
   * again — rather than timing out and sending the resume again while this one still waits.
   */
  resumeWaitMs?: number
  /**
   * The log's events of these services after `from` up to `to`; undefined when it no longer holds `from`. `rank` is
   * the rank of the offset's event at `from` (a log whose place holds several events ranks them there).
   */
  between?(from: P, to: P, services: readonly string[], rank: number): Promise<PublishedEvent[] | undefined>
}

/** A place in the history: the log's place, and the rank among the events published at it. */
interface Place<P> {
  at: P
  rank: number
}

interface Entry<P> extends RecordedEvent, Place<P> {
  time: number
}

/**
 * The event history over a database's event log: offsets are places in the log's one order
 * (`<epoch>.<place>`, base 36), the same on every instance, so a client may resume on any of them.
 *
 * Every instance follows the whole log and publishes every event; `append` is called while the log
 * hands an event out, and answers that event's place. Each process keeps what it published (data as
 * published: protected fields already removed, and the publishing context) in memory for the
 * retention, so `since` answers what the events were published as, not raw log rows. An offset is
 * known when this process has followed the log since before it and has not pruned past it: an
 * instance started after a client's offset answers `'unknown'` (the client refetches). An offset a
 * faster instance gave out that this one has not reached yet is waited for (`catchUpMs`), so that no
 * event is replayed and then delivered live again.
 *
 * Events published outside the log (a service without a live store) rank after the log event they
 * follow (`<epoch>.<place>.<rank>`): recoverable on this instance only.
 */
export class OrderedLogHistory<P> implements EventHistory {
  private readonly maxEvents: number
  private readonly catchUpMs: number
  private readonly resumeWaitMs: number
  private entries: Entry<P>[] = []
  private start = 0
  /** The place of the last pruned event: offsets before it lost events. */
  private pruned?: Place<P>
  /** The last place handed out by `append`. */
  private last?: Place<P>

  constructor(private readonly options: OrderedLogHistoryOptions<P>) {
    this.maxEvents = options.maxEvents ?? 100_000
    this.catchUpMs = options.catchUpMs ?? 5_000
    this.resumeWaitMs = options.resumeWaitMs ?? 2_000
  }

  append(event: PublishedEvent): string {
    const place = this.next()
    this.last = place
    const offset = this.offsetOf(place)
    this.entries.push({ ...event, offset, ...place, time: this.options.clock.now() })
    this.prune()
    return offset
  }

  head(): string {
    const position = this.options.log.position ?? this.options.order.origin
    return this.offsetOf(this.lastAt(position) ? this.last! : { at: position, rank: 0 })
  }

  async since(offset: string): Promise<RecordedEvent[] | 'unknown'> {
    const events = await this.after(offset, this.catchUpMs)
    return events === 'ahead' ? 'unknown' : events
  }

  /**
   * `since`, waiting at most `waitMs` for this process to reach the offset: `'ahead'` when it has not (a faster
   * instance gave the offset out, and this one follows the log later than that).
   */
  private async after(offset: string, waitMs: number): Promise<RecordedEvent[] | 'unknown' | 'ahead'> {
    const { log, order } = this.options
    const place = log.epoch === undefined ? undefined : this.placeOf(offset, log.epoch)
    if (!place || log.startedAfter === undefined || order.compare(place.at, log.startedAfter) < 0) return 'unknown'
    const behind = log.position === undefined || order.compare(log.position, place.at) < 0
    if (behind && !(await log.whenAt(place.at, waitMs))) return 'ahead'
    this.prune()
    if (this.pruned && this.before(place, this.pruned)) return 'unknown'
    const events: RecordedEvent[] = []
    for (let index = this.entries.length - 1; index >= this.start; index--) {
      const entry = this.entries[index]!
      if (!this.before(place, entry)) break
      const { path, event, data, context, offset: at } = entry
      events.push(
        context === undefined ? { path, event, data, offset: at } : { path, event, data, context, offset: at }
      )
    }
    return events.reverse()
  }

  async reached(offset: string, timeoutMs: number): Promise<boolean> {
    const { log, order } = this.options
    const place = log.epoch === undefined ? undefined : this.placeOf(offset, log.epoch)
    if (!place) return false
    if (log.position !== undefined && order.compare(place.at, log.position) < 0) return true
    if (log.position !== undefined && order.compare(place.at, log.position) === 0)
      return place.rank === 0 || (this.last !== undefined && !this.before(this.last, place))
    return log.whenAt(place.at, timeoutMs)
  }

  /** False at once for a log that cannot tell (`caughtUp` missing): no offset for a write, not one too early. */
  settled(timeoutMs: number): Promise<boolean> {
    return this.options.log.caughtUp?.(timeoutMs) ?? Promise.resolve(false)
  }

  /**
   * `since`, for the events of some services only: an offset from before this process followed the log is known
   * too when the log still holds it and none of its events of these services between it and this process's start
   * `concerns` the caller (it reads them as raw log rows: they are only tested, never answered); the events
   * answered are then those after the start. A quiet live query resumes so on a freshly started instance. It waits
   * `resumeWaitMs` at most for this process to reach the offset, then fails with 503: the offset is not past the
   * history, this instance is only behind the one that gave it out (its log feed runs late under load), and the
   * client tries the resume again. A reset instead refetches the list (likely what reset 6 watches of the PostgreSQL
   * oracle at full size, with writes answered in up to 6 s).
   */
  async sinceFor(
    offset: string,
    services: readonly string[],
    concerns: (event: PublishedEvent) => boolean
  ): Promise<RecordedEvent[] | 'unknown'> {
    const events = await this.after(offset, this.resumeWaitMs)
    if (events === 'ahead')
      throw new Unavailable('This instance has not yet reached the offset this live query resumes from; try again')
    const { log, order } = this.options
    const place = events === 'unknown' && log.epoch !== undefined ? this.placeOf(offset, log.epoch) : undefined
    const start = log.startedAfter
    const between = this.options.between
    if (!place || start === undefined || !between || order.compare(place.at, start) >= 0) return events
    const gap = await between(place.at, start, services, place.rank)
    if (!gap || gap.some(concerns)) return 'unknown'
    return this.since(this.offsetOf({ at: start, rank: 0 }))
  }

  /**
   * The place of an event published now: the first one published while the log hands out place `p`
   * is `p` itself; any other (a second service on the table, an event from outside the log) ranks
   * after the last place given out.
   */
  private next(): Place<P> {
    const { delivering, position } = this.options.log
    const at = position ?? this.options.order.origin
    const lastHere = this.lastAt(at)
    if (delivering !== undefined && this.options.order.compare(delivering, at) === 0 && !lastHere)
      return { at, rank: 0 }
    return { at, rank: lastHere ? this.last!.rank + 1 : 1 }
  }

  private lastAt(at: P): boolean {
    return this.last !== undefined && this.options.order.compare(this.last.at, at) === 0
  }

  private before(a: Place<P>, b: Place<P>): boolean {
    const byPlace = this.options.order.compare(a.at, b.at)
    return byPlace < 0 || (byPlace === 0 && a.rank < b.rank)
  }

  private offsetOf({ at, rank }: Place<P>): string {
    const offset = `${this.options.log.epoch ?? '-'}.${this.options.order.encode(at)}`
    return rank === 0 ? offset : `${offset}.${rank.toString(36)}`
  }

  /** The place an offset of this epoch names, or undefined for anything else. */
  private placeOf(offset: string, epoch: string): Place<P> | undefined {
    const { order } = this.options
    const fields = order.fields
    const parts = offset.split('.')
    if (parts.length < 1 + fields || parts.length > 2 + fields || parts[0] !== epoch) return undefined
    const at = order.decode(parts.slice(1, 1 + fields))
    const ranked = parts.length === 2 + fields
    const rank = ranked ? base36Number(parts[1 + fields]!) : 0
    return at === undefined || rank === undefined || (ranked && rank === 0) ? undefined : { at, rank }
  }

  private prune(): void {
    const oldest = this.options.clock.now() - this.options.retentionMs
    while (
      this.start < this.entries.length &&
      (this.entries.length - this.start > this.maxEvents || this.entries[this.start]!.time < oldest)
    ) {
      const { at, rank } = this.entries[this.start]!
      this.pruned = { at, rank }
      this.start++
    }
    if (this.start > 1024 && this.start * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.start)
      this.start = 0
    }
  }
}

/** A base-36 safe integer written the one way `toString(36)` writes it, or undefined. */
export function base36Number(digits: string): number | undefined {
  const value = /^[0-9a-z]{1,11}$/.test(digits) ? parseInt(digits, 36) : NaN
  return Number.isSafeInteger(value) && value.toString(36) === digits ? value : undefined
}

/** A base-36 bigint (up to 13 digits) written the one way `toString(36)` writes it, or undefined. */
export function base36BigInt(digits: string): bigint | undefined {
  if (!/^[0-9a-z]{1,13}$/.test(digits)) return undefined
  let value = 0n
  for (const digit of digits) value = value * 36n + BigInt(parseInt(digit, 36))
  return value.toString(36) === digits ? value : undefined
}
