import type { Clock } from '../../domain/clock.js'
import {
  base36Number,
  OrderedLogHistory,
  type LogOrder,
  type LogPosition as OrderedLogPosition
} from '../store-commons/event-log/index.js'

/** What the history needs of the event log (EventLog): its numbers, and where this process is in them. */
export type LogPosition = OrderedLogPosition<number>

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

/** The RethinkDB log's order: the counter row's numbers (ADR 0007), one base-36 part in an offset. */
const numbered: LogOrder<number> = {
  origin: 0,
  fields: 1,
  compare: (a, b) => a - b,
  encode: (seq) => seq.toString(36),
  decode: ([seq]) => base36Number(seq!)
}

/**
 * The event history over the RethinkDB event log: offsets `<epoch>.<seq>[.<rank>]`, the same on every
 * instance (OrderedLogHistory says how they are kept and answered).
 */
export class RethinkDbEventHistory extends OrderedLogHistory<number> {
  constructor(options: RethinkDbEventHistoryOptions) {
    super({ ...options, order: numbered })
  }
}
