import type { RTable } from 'rethinkdb-ts'
import type { Data } from '../../domain/service/service.js'

/* The event log's rows and events as stored (EventLogWrites writes them, EventLog and the event history read them). */

/** One row of the event log: a service event as every instance must publish it. */
export interface LoggedEvent {
  /** The event's number in the log (1, 2, 3, …), taken from the log's counter by the query that logged it. */
  id: number
  /** Server time in ms: what pruning goes by. */
  ts: number
  table: string
  /** created, updated, patched, removed, or a custom event name. */
  event: string
  /** The record as written (as removed, for `removed`), or a custom event's data. */
  record: unknown
  /** The W3C `traceparent` of the writer's span (tracing on): instances publishing the event link to it. */
  trace?: string
  /**
   * A later write of the record came before this event's number (see EventLogWrites.superseded): the event holds
   * its number but is not published (its write's effect is in a later event of the record). TableWatch still
   * matches it against the table's change; keyed writes still answer with its record.
   */
  superseded?: true
}

/**
 * One keyed write of a log row (rethinkdb-keyed-writes.ts): its key's row id, the claim that wrote it and its
 * request's digest, and for a keyed create of a grouped insert the ids of its records (`ids`, in the records'
 * `field`): its answer is those of the row's events; without `ids`, all of them. The row is one document: its
 * events and its keys' answers commit together. A row lists its keys in `keys` too (the log's multi index `keys`).
 */
export interface KeyMark {
  key: string
  claim: string
  fingerprint: string
  ids?: unknown[]
  field?: string
}

/** The idempotency keys' table of a database (rethinkdb-keyed-writes.ts): the log's pruning keeps their answers. */
export const KEYS_TABLE = 'plumage_idempotency'

/** One event as a log row holds it: its number and time are the row's. */
export type RowEvent = Omit<LoggedEvent, 'id' | 'ts'>

/**
 * One row of the log table: the events of one write, numbered `id`, `id + 1`, … in their order (one
 * document per write however many records it wrote, see docs/adr/0008-cheap-exactly-once.md). Rows
 * written before 0008 hold one event in their own fields.
 */
export interface LogRow extends Partial<RowEvent> {
  id: number
  ts: number
  events?: RowEvent[]
  keys?: string[]
  marks?: KeyMark[]
}

export type WriteEvent = 'created' | 'updated' | 'patched' | 'removed'

/** The table a logged write changed: its name in the events, and the term and key the check after numbering reads. */
export interface LoggedTable {
  name: string
  term: RTable<Data>
  idField: string
}

/**
 * The key of the log's counter row, in a table of its own (`<log>_counter`): a soft write into the
 * log table itself waits behind the hard log inserts' flushes (see docs/adr/0008-cheap-exactly-once.md).
 * Logs made before kept it in the log table under the same key: a string, so no range of numbers ever
 * included it; `setup()` moves it.
 */
export const COUNTER = 'counter'
/** Above every event number (the feed's and replay's upper bound; `r.maxval` would include string keys). */
export const MAX_SEQ = Number.MAX_SAFE_INTEGER

/** The log's counter row: the last number taken, and the log's epoch (drawn when the row is made). */
export interface Counter {
  id: typeof COUNTER
  seq: number
  epoch: string
}

/** A row's events: its `events`, or (a row written before 0008) the one event in its own fields. */
export function eventsOf(row: LogRow): RowEvent[] {
  if (row.events) return row.events
  const { table = '', event = '', record, trace } = row
  return [{ table, event, record, ...(trace !== undefined ? { trace } : {}) }]
}
