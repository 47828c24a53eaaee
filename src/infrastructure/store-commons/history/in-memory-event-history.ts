import { randomBytes } from 'node:crypto'
import type { Clock } from '../../../domain/clock.js'
import type { EventHistory, PublishedEvent, RecordedEvent } from '../../../domain/realtime/event-history.js'

interface Entry extends RecordedEvent {
  seq: number
  at: number
}

/** Most events kept by default: a burst bigger than this within the retention makes older offsets unknown. */
export const MAX_EVENTS = 100_000

/**
 * The event history in this process's memory, for one instance. Offsets are `<epoch>.<seq>`: the
 * epoch is drawn when the process starts, so an offset from before a restart (or from another
 * process) is unknown rather than mistaken for one of ours. Events are kept for `retentionMs` and
 * at most `maxEvents`; an offset from before the last pruned event is unknown too.
 */
export class InMemoryEventHistory implements EventHistory {
  private readonly epoch = randomBytes(6).toString('base64url')
  /** Kept events, oldest first, from `entries[start]` (the front is dropped in chunks). */
  private entries: Entry[] = []
  private start = 0
  private seq = 0
  /** The seq of the last pruned event: offsets before it lost events. */
  private prunedThrough = 0
  /** The offset of `seq`, made once: every connection keeps the head it was given (one string, not one each). */
  private latest = this.offsetOf(0)

  constructor(
    private readonly clock: Clock,
    private readonly retentionMs: number,
    private readonly maxEvents = MAX_EVENTS
  ) {}

  append(event: PublishedEvent): string {
    const seq = ++this.seq
    const offset = this.offsetOf(seq)
    this.latest = offset
    this.entries.push({ ...event, offset, seq, at: this.clock.now() })
    this.prune()
    return offset
  }

  head(): string {
    return this.latest
  }

  async since(offset: string): Promise<RecordedEvent[] | 'unknown'> {
    const seq = this.seqOf(offset)
    this.prune()
    if (seq === undefined || seq > this.seq || seq < this.prunedThrough) return 'unknown'
    // Kept events are consecutive: the one after `seq` sits (seq - prunedThrough) from the front.
    return this.entries
      .slice(this.start + seq - this.prunedThrough)
      .map(({ path, event, data, context, offset: at }) =>
        context === undefined ? { path, event, data, offset: at } : { path, event, data, context, offset: at }
      )
  }

  async reached(offset: string): Promise<boolean> {
    const seq = this.seqOf(offset)
    return seq !== undefined && seq <= this.seq
  }

  private offsetOf(seq: number): string {
    return `${this.epoch}.${seq.toString(36)}`
  }

  private seqOf(offset: string): number | undefined {
    const dot = offset.lastIndexOf('.')
    if (dot < 0 || offset.slice(0, dot) !== this.epoch) return undefined
    const digits = offset.slice(dot + 1)
    const seq = /^[0-9a-z]{1,11}$/.test(digits) ? parseInt(digits, 36) : NaN
    return Number.isSafeInteger(seq) && String(seq.toString(36)) === digits ? seq : undefined
  }

  private prune(): void {
    const oldest = this.clock.now() - this.retentionMs
    while (
      this.start < this.entries.length &&
      (this.entries.length - this.start > this.maxEvents || this.entries[this.start]!.at < oldest)
    ) {
      this.prunedThrough = this.entries[this.start]!.seq
      this.start++
    }
    if (this.start > 1024 && this.start * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.start)
      this.start = 0
    }
  }
}
