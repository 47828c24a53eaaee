import type { R, RDatum, RSingleSelection, RTable, WriteResult } from 'rethinkdb-ts'
import { reqlOf } from './rethinkdb-driver.js'

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

export interface EventLogWritesOptions {
  r: R
  db: string
  /** The log table, and the table of its counter row. */
  table: string
  counterTable: string
  /** The active span's `traceparent` when tracing is on, logged with each event. */
  traceparent?: () => string | undefined
}

/**
 * The writing half of the event log (EventLog follows it): the ReQL that numbers a write's events from the
 * counter row and inserts them in the same query as the write, a custom event's insert, and the counter's
 * repair after a crash. Its terms are built on `r` and only run inside the queries the callers send.
 */
export class EventLogWrites {
  private readonly r: R
  private readonly db: string
  private readonly tableName: string
  private readonly counterTableName: string
  private readonly traceparent?: () => string | undefined
  /** The functions that log a write's events, per table, event and tracing (see recorder). */
  private readonly recorders = new Map<string, Term>()

  constructor(options: EventLogWritesOptions) {
    this.r = options.r
    this.db = options.db
    this.tableName = options.table
    this.counterTableName = options.counterTable
    this.traceparent = options.traceparent
  }

  /**
   * Wraps a write (run with `returnChanges`) so that the events of its changes are numbered and
   * inserted into the log by the same query; the result is the write's own. Rejected documents log
   * nothing. `marks` (a term: an array of KeyMark) are the keyed writes among it: the row carries those that wrote
   * all they were asked to (a failed write keeps no key). `trace`: the writer's `traceparent` as a term (a variable
   * of a query function built once, see rethinkdb-keyed-creates.ts), null for none; by default the active span's.
   */
  recording<T>(
    write: RDatum<WriteResult<T>>,
    table: string,
    event: WriteEvent,
    marks?: Term,
    trace?: Term | null
  ): RDatum<WriteResult<T>> {
    const traced = trace === undefined ? this.traceparent?.() : undefined
    const term = trace === undefined ? (traced === undefined ? null : this.r.expr(traced)) : trace
    const recorder = this.recorder(table, event, term !== null, marks !== undefined)
    const args = [...(term === null ? [] : [term]), ...(marks ? [marks] : [])]
    return write.do(...args, recorder) as RDatum<WriteResult<T>>
  }

  /**
   * The function a write's result goes through to log its events (and, when traced, the writer's
   * `traceparent` as its second argument), built once per table, event and tracing: rethinkdb-ts
   * makes every term it builds an object with a method per ReQL term, and building this function's
   * ~60 terms for every grouped write was 14 % of an instance's CPU with 4 instances (BENCHMARKS.md,
   * "Where the CPU goes with 2 and 4 instances"). Terms are immutable JSON: the function is built
   * once, and each write's query only refers to it.
   */
  private recorder(table: string, event: WriteEvent, traced: boolean, keyed: boolean): Term {
    const key = `${traced ? 'traced' : 'plain'}${keyed ? ' keyed' : ''}\u0000${event}\u0000${table}`
    let recorder = this.recorders.get(key)
    if (recorder) return recorder
    const r = this.r
    const field = event === 'removed' ? 'old_val' : 'new_val'
    const record = (result: Term, trace?: Term, marks?: Term): Term =>
      r.do(
        result('changes')
          .default([])
          .filter((change: Term) => change.hasFields('error').not().and(change(field).default(null).ne(null)))
          .map((change: Term) => ({ table, event, record: change(field), ...(trace ? { trace } : {}) })),
        (entries: Term) =>
          r.branch(
            entries.isEmpty(),
            result,
            this.append(entries, marks && this.marked(result, entries, marks)).do(() => result)
          )
      )
    const call =
      traced && keyed
        ? r.do(null, null, null, (result: Term, trace: Term, marks: Term) => record(result, trace, marks))
        : traced
          ? r.do(null, null, (result: Term, trace: Term) => record(result, trace))
          : keyed
            ? r.do(null, null, (result: Term, marks: Term) => record(result, undefined, marks))
            : r.do(null, (result: Term) => record(result))
    // The call's term is [FUNCALL, [function, ...arguments]]: the function alone is kept.
    const [, [func]] = JSON.parse(r.serialize(call)) as [number, [unknown]]
    recorder = reqlOf(func)
    this.recorders.set(key, recorder)
    return recorder
  }

  /**
   * What a log row carries of its keyed writes: those that wrote all they were asked to (a keyed create of a
   * grouped insert: every one of its records is among the logged ones; else: the write had no error).
   */
  private marked(result: Term, entries: Term, marks: Term): Term {
    const r = this.r
    // A write without errors wrote all it was asked to: every mark is kept, without comparing ids.
    return r.do(
      r.branch(
        result('errors').eq(0),
        marks,
        marks.filter((mark: Term) =>
          mark.hasFields('ids').and(
            mark('ids')
              .setDifference(entries.map((entry: Term) => entry('record')(mark('field'))))
              .isEmpty()
          )
        )
      ),
      (kept: Term) => r.branch(kept.isEmpty(), {}, { keys: kept.map((mark: Term) => mark('key')), marks: kept })
    )
  }

  /**
   * Logs a custom event (e.g. `service.emit('archived', data)`): every instance publishes it once. With
   * `guard`, only when it is true on the server, in the same query (a lease still held: RowLease);
   * resolves whether the event was logged.
   */
  async publish(table: string, event: string, record: unknown, guard?: Term): Promise<boolean> {
    const append = this.append(this.r.expr([{ table, event, record, ...this.trace() }]))
    if (guard === undefined) {
      await append.run()
      return true
    }
    return (await this.r
      .branch(
        guard,
        append.do(() => true),
        false
      )
      .run()) as boolean
  }

  /**
   * Before the log's `rows` are pruned: the answers of the keyed writes among them, copied to their keys' rows where
   * a key still lacks it (its writer was stopped before copying it, or a keyed create, which leaves it to this: see
   * rethinkdb-keyed-writes.ts). The log row was the commit; once pruned, the key's row must hold the answer for the
   * rest of its retention. Hard, in the same query as the rows' deletion (EventLog.prune).
   */
  keepAnswers(rows: Term): Term {
    const r = this.r
    const keys = r.db(this.db).table(KEYS_TABLE)
    // One write for all the keys (keyed creates leave every answer to it): by key, the claims and their answers.
    const kept = rows
      .filter((row: Term) => row.hasFields('marks'))
      .concatMap((row: Term) =>
        row('marks').map((mark: Term) => ({
          key: mark('key'),
          claim: mark('claim'),
          answer: markedRecords(r, row, mark)
        }))
      )
      .group('key')
      .ungroup()
      .map((group: Term) => [group('group'), group('reduction')])
      .coerceTo('object')
    return r.branch(
      r.db(this.db).tableList().contains(KEYS_TABLE),
      r.do(kept, (kept: Term) =>
        r.branch(
          kept.keys().isEmpty(),
          null,
          keys.getAll(r.args(kept.keys()) as never).update((key: Term) =>
            r.do(
              kept(key('id'))
                .filter((one: Term) => one('claim').eq(key('claim')))
                .nth(0)
                .default(null),
              (one: Term) => r.branch(one.ne(null).and(key.hasFields('answer').not()), { answer: one('answer') }, {})
            )
          )
        )
      ),
      null
    )
  }

  /** The writer's trace context, as a field of the logged events (none when tracing is off). */
  private trace(): { trace?: string } {
    const trace = this.traceparent?.()
    return trace === undefined ? {} : { trace }
  }

  table(): RTable<LogRow> {
    return this.r.db(this.db).table<LogRow>(this.tableName)
  }

  counterTable(): RTable<Counter> {
    return this.r.db(this.db).table<Counter>(this.counterTableName)
  }

  counter(): RSingleSelection<Counter | null> {
    return this.counterTable().get(COUNTER)
  }

  /**
   * Takes as many numbers as there are entries from the counter row (one atomic update) and inserts
   * the entries as one row under the first of them: one document per write, however many records it
   * wrote. A missing counter row fails the query loudly.
   *
   * The counter's update is soft (not awaited on disk, see docs/adr/0008-cheap-exactly-once.md), in a
   * table of its own that no hard write waits behind: a crash loses its last updates, while the log's
   * rows are hard. A counter gone back (a crash, a restored backup) would hand out numbers the log
   * holds: the query sees its numbers taken, moves the counter past the newest logged number and
   * takes new ones — a used number is never handed out again, nor an event dropped.
   */
  private append(entries: Term, mark?: Term): Term {
    const r = this.r
    return r.do(entries.count(), (count: Term) =>
      this.take(count)
        .do((last: Term) =>
          r.branch(
            this.free(last, count),
            last,
            this.repair().do(() => this.take(count))
          )
        )
        .do((last: Term) => {
          const row = { id: last.sub(count).add(1), ts: serverMs(r), events: entries }
          return this.table().insert((mark ? r.expr(row).merge(mark) : row) as never)
        })
        // A number taken twice all the same (two repairs racing): say so, never drop events silently.
        .do((inserted: Term) => r.branch(inserted('errors').eq(0), inserted, r.error(inserted('first_error'))))
    )
  }

  /**
   * The last of `count` numbers taken from the counter row (soft: see append). A failed update (the
   * primary gone in a failover) fails the query with the server's message: its `changes` would carry
   * the counter's old number, which is not this query's to use.
   */
  private take(count: Term): Term {
    const r = this.r
    return this.counter()
      .update((row: Term) => ({ seq: row('seq').add(count) }), { durability: 'soft', returnChanges: 'always' })
      .do((result: Term) =>
        r.branch(
          result('errors').gt(0),
          r.error(result('first_error')),
          result('changes')
            .nth(0)('new_val')('seq')
            .default(
              r.error(
                `The counter row of the RethinkDB event log ${this.db}.${this.tableName} is missing; restart an instance to make it again`
              )
            )
        )
      )
  }

  /**
   * Whether no logged row holds any of the numbers `last - count + 1` … `last`: the row with the
   * highest first number up to `last` (one index read) ends before them. Rows of writes that took
   * their numbers later all start after `last`.
   */
  private free(last: Term, count: Term): Term {
    return this.table()
      .between(0, last.add(1))
      .orderBy({ index: this.r.desc('id') })
      .limit(1)
      .map((row: Term) => lastNumber(row))
      .nth(0)
      .default(0)
      .le(last.sub(count))
  }

  /** Moves the counter past the newest logged number, if it is behind it (never back). */
  repair(): Term {
    const r = this.r
    return r.do(this.newest(), (newest: Term) =>
      this.counter().update((row: Term) => ({ seq: r.branch(row('seq').lt(newest), newest, row('seq')) }), {
        durability: 'soft'
      })
    )
  }

  /** The newest logged number (0 for an empty log). */
  newest(): Term {
    return this.table()
      .between(0, MAX_SEQ)
      .orderBy({ index: this.r.desc('id') })
      .limit(1)
      .map((row: Term) => lastNumber(row))
      .nth(0)
      .default(0)
  }
}

/** The records a keyed write of a log row answers (its mark): its own among the row's events (KeyMark). */
export function markedRecords(r: R, row: Term, mark: Term): Term {
  return r
    .branch(
      mark.hasFields('ids'),
      row('events').filter((event: Term) => mark('ids').contains(event('record')(mark('field')))),
      row('events')
    )
    .map((event: Term) => event('record'))
}

/** The last number a log row holds (a row from before 0008 holds one). */
function lastNumber(row: Term): Term {
  return row('id').add(row('events').count().default(1)).sub(1)
}

// ReQL terms are untyped inside the query: rethinkdb-ts' generics cannot follow `do`/`branch`.
export type Term = RDatum<any>

/** The server's clock in ms: one clock for every instance's timestamps (per server of a cluster). */
export function serverMs(r: R): RDatum<number> {
  return r.now().toEpochTime().mul(1000).round()
}
