import type { Clock } from '../../domain/clock.js'
import {
  base36BigInt,
  OrderedLogHistory,
  type LogOrder,
  type LogPosition as OrderedLogPosition
} from '../store-commons/event-log/index.js'
import { comparePlaces, type LogPlace } from './postgres-event-log.js'

/** What the history needs of the event log (PostgresEventLog): its order and where this process is in it. */
export type LogPosition = OrderedLogPosition<LogPlace>

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

/** The PostgreSQL log's order: the writing transaction's id, then the row's number (ADR 0011). */
const byTransaction: LogOrder<LogPlace> = {
  origin: { tx: 0n, id: 0n },
  fields: 2,
  compare: comparePlaces,
  encode: ({ tx, id }) => `${tx.toString(36)}.${id.toString(36)}`,
  decode: ([tx, id]) => {
    const place = { tx: base36BigInt(tx!), id: base36BigInt(id!) }
    return place.tx === undefined || place.id === undefined ? undefined : { tx: place.tx, id: place.id }
  }
}

/**
 * The event history over the PostgreSQL event log: offsets `<epoch>.<tx>.<id>[.<rank>]` (base 36), the
 * same on every instance (OrderedLogHistory says how they are kept and answered).
 */
export class PostgresEventHistory extends OrderedLogHistory<LogPlace> {
  constructor(options: PostgresEventHistoryOptions) {
    super({ ...options, order: byTransaction })
  }
}
