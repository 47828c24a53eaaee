import type { R, RDatum, RSingleSelection, RTable, WriteResult } from 'rethinkdb-ts'
import { reqlOf } from './rethinkdb-driver.js'
import {
  COUNTER,
  KEYS_TABLE,
  MAX_SEQ,
  type Counter,
  type LoggedTable,
  type LogRow,
  type WriteEvent
} from './event-log-rows.js'

export * from './event-log-rows.js'

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
    table: LoggedTable,
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
  private recorder(logged: LoggedTable, event: WriteEvent, traced: boolean, keyed: boolean): Term {
    const table = logged.name
    const key = `${traced ? 'traced' : 'plain'}${keyed ? ' keyed' : ''}\u0000${event}\u0000${table}\u0000${logged.idField}`
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
            this.append(entries, marks && this.marked(result, entries, marks), (taken: Term) =>
              this.superseded(logged, event, taken)
            ).do(() => result)
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
   * The entries of a write as logged under the numbers just taken: an entry whose record the table no longer holds
   * as the write left it (a removed one: that is back) is marked `superseded`. Read after the numbers are taken,
   * so this is what keeps one record's events in the order its writes were applied (docs/adr/0007): the write and
   * the taking of numbers are two documents, and two writes of one record could take their numbers in the other
   * order than the table applied them. An entry kept found the record as its write left it after taking its
   * numbers, so the record was so when they were taken (both reads of one document, the numbers in between): the
   * logged values of a record follow the order in which numbers were taken, which is the log's. A superseded entry
   * was overwritten before that read by a later write, which takes its numbers after its own write, so its entry
   * carries the record from then on (or is superseded in turn by one that does): the superseded entry keeps its
   * number, unpublished. One `getAll` of the written keys.
   */
  private superseded(table: LoggedTable, event: WriteEvent, entries: Term, direct = false): Term {
    const r = this.r
    // The records as the table holds them, by key: one read, and no search through them per entry (a grouped
    // insert's hundreds). A key as JSON in an array tells the number 1 from the string "1".
    const keyOf = (id: Term): Term => r.expr([id]).coerceTo('string')
    const key = (entry: Term): Term => keyOf(entry('record')(table.idField))
    const held = table.term
      .getAll(r.args(entries.map((entry: Term) => entry('record')(table.idField)).distinct() as never))
      .concatMap((record: Term) => [keyOf(record(table.idField)), record])
      .coerceTo('array')
    return r.do((r.object as (...pairs: unknown[]) => Term)(r.args(held as never)), (current: Term) =>
      entries.map((entry: Term) =>
        direct && event === 'created'
          ? // A creation found directly in the table: announced with the record as it is now, unless it is gone.
            r.branch(
              current.hasFields(key(entry)),
              entry.merge({ record: current(key(entry)) }),
              entry.merge({ superseded: true })
            )
          : r.branch(
              event === 'removed'
                ? current.hasFields(key(entry))
                : current(key(entry)).default(null).ne(entry('record')),
              entry.merge({ superseded: true }),
              entry
            )
      )
    )
  }

  /**
   * Logs a custom event (e.g. `service.emit('archived', data)`): every instance publishes it once. With
   * `guard`, only when it is true on the server, in the same query (a lease still held: RowLease);
   * resolves whether the event was logged. With `written` (a write made directly in that table), the event is
   * checked after its number is taken, as a store's write is (`superseded`): logged late, after a later write of
   * the record, it keeps its number unpublished instead of setting the record back on every instance — but a
   * creation is announced all the same, with the record as the table holds it then (superseded only when gone).
   */
  async publish(table: string, event: string, record: unknown, guard?: Term, written?: LoggedTable): Promise<boolean> {
    const entries = this.r.expr([{ table, event, record, ...this.trace() }])
    const check = written && ((taken: Term) => this.superseded(written, event as WriteEvent, taken, true))
    const append = this.append(entries, undefined, check)
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
  private append(entries: Term, mark?: Term, check?: (entries: Term) => Term): Term {
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
        // Read after the numbers are taken (see superseded), in the same query, before the row goes in.
        .do((last: Term) =>
          r.do(check ? check(entries) : entries, (events: Term) => {
            const row = { id: last.sub(count).add(1), ts: serverMs(r), events }
            return this.table().insert((mark ? r.expr(row).merge(mark) : row) as never)
          })
        )
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
