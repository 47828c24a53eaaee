import type { R, RTable } from 'rethinkdb-ts'
import type { Clock } from '../../domain/clock.js'
import type { PublishedEvent } from '../../domain/realtime/event-history.js'
import {
  base36Number,
  OrderedLogHistory,
  type LogOrder,
  type LogPosition as OrderedLogPosition
} from '../store-commons/event-log/index.js'
import { eventsOf, type LogRow } from './event-log-rows.js'

/** What the history needs of the event log (EventLog): its numbers, and where this process is in them. */
export type LogPosition = OrderedLogPosition<number>

/** What reading the log before this process's start needs (EventLog): its rows, and the tables it follows. */
export interface LogRows {
  readonly r: R
  rows(): RTable<LogRow>
  follows(table: string): boolean
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
  /** The log's rows: a fresh instance reads the log from before its start (`sinceFor`). */
  read?: LogRows
}

/** Most log rows `between` reads: a longer gap is not worth a resume. */
const GAP = 10_000

/**
 * The log's events of these tables after number `from` up to `to`; undefined when it no longer holds `from` (no row
 * numbered at or before it: pruned), or when the gap has too many rows. A row holds the events of one write,
 * numbered from its id on, so the row at or before `from` may hold events after it.
 */
async function between(
  log: LogRows,
  from: number,
  to: number,
  tables: readonly string[],
  rank: number
): Promise<PublishedEvent[] | undefined> {
  if (!tables.every((table) => log.follows(table))) return undefined
  const { r } = log
  const { head, gap } = (await r
    .expr({
      head: log
        .rows()
        .between(r.minval, from, { rightBound: 'closed' })
        .orderBy({ index: r.desc('id') })
        .limit(1)
        .coerceTo('array'),
      gap: log
        .rows()
        .between(from + 1, to, { rightBound: 'closed' })
        .orderBy({ index: r.asc('id') })
        .limit(GAP)
        .coerceTo('array')
    })
    .run()) as unknown as { head: LogRow[]; gap: LogRow[] }
  if (head.length === 0 || gap.length === GAP) return undefined
  return gapEvents([...head, ...gap], { from, rank, to, tables })
}

/**
 * The events of log rows after the event at number `from` and `rank`, up to number `to`, of these tables. A row of
 * several events is handed out once the sequence stands at its last number, so its events are published at that
 * number ranked 1, 2, … (OrderedLogHistory): an offset there with rank `n` names the row's event `n - 1`, and the
 * row's events after it come after the offset too.
 */
export function gapEvents(
  rows: readonly LogRow[],
  { from, rank, to, tables }: { from: number; rank: number; to: number; tables: readonly string[] }
): PublishedEvent[] {
  const events: PublishedEvent[] = []
  for (const row of rows) {
    const all = eventsOf(row)
    const endsAtOffset = all.length > 1 && row.id + all.length - 1 === from && rank > 0
    // Ranks count the row's published events: superseded ones hold a number but were never published.
    let published = 0
    all.forEach((event, index) => {
      if (event.superseded) return
      const seq = row.id + index
      const after = seq > from || (endsAtOffset && published >= rank)
      published++
      if (after && seq <= to && tables.includes(event.table))
        events.push({ path: event.table, event: event.event, data: event.record })
    })
  }
  return events
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
 * instance (OrderedLogHistory says how they are kept and answered). With `read`, a watch resumed on an instance
 * started after its offset is answered from the log's rows before that start (`sinceFor`).
 */
export class RethinkDbEventHistory extends OrderedLogHistory<number> {
  constructor(options: RethinkDbEventHistoryOptions) {
    const { read } = options
    super({
      ...options,
      order: numbered,
      ...(read
        ? {
            between: (from: number, to: number, tables: readonly string[], rank: number) =>
              between(read, from, to, tables, rank)
          }
        : {})
    })
  }
}
