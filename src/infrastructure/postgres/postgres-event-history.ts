import type { Clock } from '../../domain/clock.js'
import type { PublishedEvent } from '../../domain/realtime/event-history.js'
import type { PostgresDatabase } from './postgres-database.js'
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
  /** The database and the log's tables: a fresh instance reads the log from before its start (`sinceFor`). */
  read?: { db: PostgresDatabase; follows(table: string): boolean }
}

/** Most events `between` reads: a longer gap is not worth a resume. */
const GAP = 10_000

/** The log's events of these tables after `from` up to `to`; undefined when it lost `from`, or reads too many. */
async function between(
  { db, follows }: NonNullable<PostgresEventHistoryOptions['read']>,
  from: LogPlace,
  to: LogPlace,
  tables: readonly string[]
): Promise<PublishedEvent[] | undefined> {
  if (!tables.every((table) => follows(table))) return undefined
  const { rows } = await db.query<{ kept: boolean; events: { service: string; event: string; record: unknown }[] }>(
    'read the event log',
    `SELECT EXISTS (SELECT 1 FROM plumage_events WHERE (tx, id) <= ($1::xid8, $2::bigint)) AS kept,
       COALESCE((SELECT json_agg(json_build_object('service', service, 'event', event, 'record', record)
         ORDER BY tx, id) FROM (SELECT * FROM plumage_events WHERE (tx, id) > ($1::xid8, $2::bigint)
         AND (tx, id) <= ($3::xid8, $4::bigint) AND service = ANY($5::text[]) LIMIT ${GAP}) gap), '[]') AS events`,
    [...[from.tx, from.id, to.tx, to.id].map(String), tables]
  )
  const { kept, events } = rows[0]!
  if (!kept || events.length === GAP) return undefined
  return events.map((row) => ({ path: row.service, event: row.event, data: row.record }))
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
    const { read } = options
    super({
      ...options,
      order: byTransaction,
      ...(read
        ? { between: (from: LogPlace, to: LogPlace, tables: readonly string[]) => between(read, from, to, tables) }
        : {})
    })
  }
}
