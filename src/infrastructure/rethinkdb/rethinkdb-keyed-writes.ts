import { randomUUID } from 'node:crypto'
import type { R, RDatum, RTable, WriteResult } from 'rethinkdb-ts'
import type { Logger } from '../../domain/logger.js'
import type { Data } from '../../domain/service/service.js'
import {
  keyInFlight,
  keyMismatch,
  type KeyedWrite,
  type KeyedWrites,
  type StoredAnswer
} from '../../domain/store/keyed-write.js'
import { keyRowId, OccasionalSweep } from '../store-commons/keyed-writes/index.js'
import type { EventLog, LoggedTable, WriteEvent } from './event-log.js'
import { KEYS_TABLE, markedRecords, serverMs, type KeyMark, type Term } from './event-log-writes.js'
import type { KeyedCreate, KeyedTables } from './rethinkdb-keyed-creates.js'
import { toStoreError } from './rethinkdb-errors.js'
import { ensureTable } from './rethinkdb-tables.js'

/** The keys of a database: one table for every store of it (a key's row id names its caller, path and method). */
export { KEYS_TABLE }

/** How often a repeat looks again at a key whose first request is still in flight. */
const POLL_MS = 20

/** A key's row: the request's digest, the claim that holds it, its expiry, and once written the write's answer. */
export interface KeyRow {
  id: string
  fingerprint: string
  /** Drawn by the query that claimed the key; its log row carries it too (KeyMark). */
  claim: string
  expiresAt: Date
  /** The records the write answered; absent while the write is in flight (or its query was cut short). */
  answer?: Data[]
}

/** What a keyed write's query answers: the write's own result (it claimed the key), or the key's row (it did not). */
type Outcome<T> = { result: WriteResult<T>; copied?: boolean } | { key: KeyRow }

export interface RethinkDbKeyedWritesOptions {
  r: R
  /** The database's name (the store's). */
  db: () => string
  /** The database's event log, when the store logs its writes. */
  events?: EventLog
  logger: Logger
  replicas?: number
  shards?: number
}

/** The keys' tables made by this process, per pool and database (made on the first keyed write). */
const made = new WeakMap<R, Map<string, Promise<void>>>()

/**
 * Idempotency keys on RethinkDB (ADR 0020), which writes one document atomically and nothing more: the commit of a
 * keyed write is ONE document that holds both its event and its key's answer — its event-log row, marked with the
 * key and the claim (KeyMark); the log row's events are the records the write answers. One query, run by the
 * server as a whole:
 *
 * 1. claims the key: a `replace` of the key's row (atomic on the row) that takes it when missing or expired, with a
 *    claim drawn for this query — of concurrent repeats, in any number of processes, exactly one claims it;
 * 2. when it claimed: the write and its log row (marked), as an unkeyed write logs — or, when the write failed,
 *    the key's row is deleted; the answer is copied to the key's row after the query (`copy`, not awaited);
 * 3. when it did not: answers the key's row, and the caller replays its answer without writing (no event either).
 *
 * A repeat that finds the key without its answer polls it until the first request's wait: once the key has its
 * answer, or a log row carries its claim (committed, not copied yet, or never: its writer was stopped; it is
 * rolled forward from the log row), that is the answer; a key deleted (its write failed) is claimed again; after
 * the wait, 409. The log's pruning copies what is still not copied before deleting the rows (keepAnswers); keyed
 * creates (rethinkdb-keyed-creates.ts) leave all their answers to it and to their repeats. So an
 * instance killed between the commit and its reply loses nothing: the log row is there, and the repeat gets its
 * answer. A write that changed nothing logs no row: its key's row, written whole with the (empty) answer in the
 * query, hard, is its only commit. Without the event log (`watch: false`) that is the commit of every write.
 *
 * A query cut short between the claim and the log row (the instance killed in the middle of its query, the
 * server lost) leaves the key in flight without a commit: the write may or may not have reached its record (its
 * change then comes out as a direct write). Its repeats are refused (409) until the key's retention ends, never
 * written twice (ADR 0020).
 */
export class RethinkDbKeyedWrites implements KeyedWrites {
  private readonly sweeper: OccasionalSweep
  /** The grouped inserts' query functions, built once (rethinkdb-keyed-creates.ts). */
  private readonly built = new Map<string, Term>()

  constructor(private readonly options: RethinkDbKeyedWritesOptions) {
    this.sweeper = new OccasionalSweep(() => this.sweep(), options.logger)
  }

  async sweep(): Promise<number> {
    await this.setup()
    const { r } = this.options
    const result = await this.run('sweep', () =>
      this.table().between(r.minval, r.now(), { index: 'expiresAt' }).delete({ durability: 'soft' }).run()
    )
    return result.deleted
  }

  async answer(keyed: KeyedWrite): Promise<StoredAnswer | undefined> {
    await this.setup()
    const key = await this.run('answer', () => this.read(keyRowId(keyed)).run())
    if (key === null) return undefined
    if (key.fingerprint !== keyed.fingerprint) throw keyMismatch()
    const answer = key.answer ?? (await this.rollForward(key))
    return answer === undefined ? undefined : { result: answer }
  }

  /**
   * Runs `write` (a term run with `returnChanges`) under the key: the write's result when this call claimed the
   * key, else the key's stored answer (the records). `target` names the write's table and event, for its log row.
   */
  async write<T>(
    keyed: KeyedWrite,
    write: RDatum<WriteResult<T>>,
    target: { table: LoggedTable; event: WriteEvent }
  ): Promise<{ result: WriteResult<T> } | { replay: Data[] }> {
    const { id, deadline } = await this.begin(keyed)
    for (;;) {
      const claim = randomUUID()
      const outcome = await this.run('write', () => this.query(keyed, id, claim, write, target).run())
      if ('result' in outcome) {
        if (!outcome.copied) this.copy(id, claim, outcome.result, target.event)
        return { result: outcome.result }
      }
      const replay = await this.repeat(keyed, outcome.key, deadline)
      if (replay) return replay
    }
  }

  /**
   * A keyed create, in the store's group commit (`submit` hands the grouped insert its key, see groupedInsert): the
   * create's outcome when it claimed the key, else the key's stored answer (the records).
   */
  async create<O>(
    keyed: KeyedWrite,
    submit: (tag: KeyedCreate) => Promise<O | { key: KeyRow }>
  ): Promise<{ outcome: O } | { replay: Data[] }> {
    const { id, deadline } = await this.begin(keyed)
    for (;;) {
      const tag = { key: id, claim: randomUUID(), fingerprint: keyed.fingerprint, retentionMs: keyed.retentionMs }
      const outcome = await submit(tag)
      if (!(typeof outcome === 'object' && outcome !== null && 'key' in outcome)) return { outcome }
      const replay = await this.repeat(keyed, outcome.key, deadline)
      if (replay) return replay
    }
  }

  /** What a grouped insert with keyed creates works on (rethinkdb-keyed-creates.ts). */
  tables(): KeyedTables {
    const { r, events } = this.options
    return { r, keys: this.table(), built: this.built, ...(events ? { events, logTable: this.logTable(events) } : {}) }
  }

  /** What a keyed write or create does first: the keys' table made, a sweep when due; its key's row id and wait. */
  private async begin(keyed: KeyedWrite): Promise<{ id: string; deadline: number }> {
    await this.setup()
    this.sweeper.due()
    keyed.handled = true
    return { id: keyRowId(keyed), deadline: Date.now() + keyed.waitMs }
  }

  /** A try that did not claim the key: its stored answer, or undefined (write again), or 409 after the wait. */
  private async repeat(keyed: KeyedWrite, key: KeyRow, deadline: number): Promise<{ replay: Data[] } | undefined> {
    if (key.fingerprint !== keyed.fingerprint) throw keyMismatch()
    const answer = await this.settled(key, deadline)
    if (answer !== undefined) {
      keyed.replayed = true
      return { replay: answer }
    }
    // The first request failed (it kept no key), or the key expired meanwhile: this one writes.
    if (Date.now() >= deadline) throw keyInFlight()
    return undefined
  }

  /** The one query of a keyed write (see the class's comment). */
  private query<T>(
    keyed: KeyedWrite,
    id: string,
    claim: string,
    write: RDatum<WriteResult<T>>,
    target: { table: LoggedTable; event: WriteEvent }
  ): RDatum<Outcome<T>> {
    const { r, events } = this.options
    const row = this.table().get(id)
    const taken = this.claim(keyed, id, claim)
    const mark: KeyMark = { key: id, claim, fingerprint: keyed.fingerprint }
    const logged = events ? events.recording(write, target.table, target.event, r.expr([mark])) : write
    const field = target.event === 'removed' ? 'old_val' : 'new_val'
    return r.do(taken, (change: Term) =>
      r.branch(
        change('new_val')('claim').eq(claim),
        logged.do((result: Term) =>
          r.branch(
            result('errors').gt(0),
            row.delete().do(() => ({ result })),
            // A write that logged nothing (it changed nothing, or there is no log) commits in the key's row: hard.
            r.do(answerOf(result, field), (answer: Term) =>
              r.branch(
                answer.isEmpty().or(r.expr(events === undefined)),
                row.replace(this.keyRow(keyed, id, claim).merge({ answer })).do(() => ({ result, copied: true })),
                { result }
              )
            )
          )
        ),
        { key: change('new_val') }
      )
    ) as unknown as RDatum<Outcome<T>>
  }

  /**
   * Claims the key (a term: the change of its row). A `replace` of the row, atomic on it, takes it when it is missing
   * or expired. Soft, as the log's counter: a server crash may lose the claims (and answers' copies) of its last
   * moment, while the log rows are hard. So a missing key whose log row (of the key's retention) is there is not
   * claimed but made again from that row, its commit: the write is never made twice.
   */
  private claim(keyed: KeyedWrite, id: string, claim: string): Term {
    const { r, events } = this.options
    const logged: Term = events
      ? this.logTable(events)
          .getAll(id, { index: 'keys' })
          .filter((row: Term) => row('ts').gt(serverMs(r).sub(keyed.retentionMs)))
          .orderBy(r.desc('id'))
          .nth(0)
          .do((row: Term) => ({
            row,
            mark: row('marks')
              .filter((mark: Term) => mark('key').eq(id))
              .nth(0)
          }))
          .default(null)
      : r.expr(null)
    return r.do(logged, (logged: Term) =>
      this.table()
        .get(id)
        .replace(
          (old: Term) =>
            r.branch(
              old.ne(null).and(old('expiresAt').gt(r.now())),
              old,
              logged.ne(null),
              {
                id,
                fingerprint: logged('mark')('fingerprint'),
                claim: logged('mark')('claim'),
                expiresAt: r.epochTime(logged('row')('ts').div(1000)).add(keyed.retentionMs / 1000),
                answer: markedRecords(r, logged('row'), logged('mark'))
              },
              this.keyRow(keyed, id, claim)
            ),
          { returnChanges: 'always', durability: 'soft' }
        )
        .do((result: Term) => r.branch(result('errors').gt(0), r.error(result('first_error')), result('changes')(0)))
    )
  }

  /** A key's row as a claim makes it (no answer yet). */
  private keyRow(keyed: KeyedWrite, id: string, claim: string): Term {
    const { r } = this.options
    return r.expr({ id, fingerprint: keyed.fingerprint, claim }).merge({
      expiresAt: r.now().add(keyed.retentionMs / 1000)
    })
  }

  /**
   * The answer of a key another request claimed: at once when it has one, else once it has (polled until
   * `deadline`, then 409); undefined when the key is gone (its write failed) or was claimed anew after expiring.
   */
  private async settled(key: KeyRow, deadline: number): Promise<Data[] | undefined> {
    for (let current: KeyRow | null = key; ;) {
      if (current === null || current.claim !== key.claim) return undefined
      if (current.answer !== undefined) return current.answer
      const rolled = await this.rollForward(current)
      if (rolled !== undefined) return rolled
      if (Date.now() >= deadline) throw keyInFlight()
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
      current = await this.run('answer', () => this.read(key.id).run())
    }
  }

  /** A key in flight whose claim's log row exists: its answer is the row's records, copied to the key's row. */
  private async rollForward(key: KeyRow): Promise<Data[] | undefined> {
    const { events, r } = this.options
    if (!events || key.answer !== undefined) return key.answer
    const logged = this.logTable(events)
      .getAll(key.id, { index: 'keys' })
      .concatMap((row: Term) =>
        row('marks')
          .filter((mark: Term) => mark('key').eq(key.id).and(mark('claim').eq(key.claim)))
          .map((mark: Term) => markedRecords(r, row, mark))
      )
      .nth(0)
      .default(null)
    const answer = (await this.run('roll forward', () =>
      r
        .do(logged, (found: Term) =>
          r.branch(
            found.eq(null),
            null,
            r.do(found, (answer: Term) =>
              this.table()
                .get(key.id)
                .update((current: Term) => r.branch(current('claim').eq(key.claim), { answer }, {}))
                .do(() => answer)
            )
          )
        )
        .run()
    )) as Data[] | null
    return answer ?? undefined
  }

  /**
   * Copies a logged write's answer to its key's row, after the query (soft, not awaited): the log row committed it,
   * and a repeat reads it there until this copy lands; should this process stop first, a repeat or the log's pruning
   * (EventLogWrites.keepAnswers) copies it.
   */
  private copy<T>(id: string, claim: string, result: WriteResult<T>, event: WriteEvent): void {
    const { r } = this.options
    const field = event === 'removed' ? 'old_val' : 'new_val'
    const answer = (result.changes ?? []).flatMap((change) => {
      const record = (change as Record<string, unknown>)[field]
      return (change as { error?: string }).error === undefined && record != null ? [record] : []
    })
    this.table()
      .get(id)
      .update((key: Term) => r.branch(key('claim').eq(claim), { answer }, {}), { durability: 'soft' })
      .run()
      .catch(() => undefined)
  }

  /** The key's row while it is live (null when missing or expired). */
  private read(id: string): RDatum<KeyRow | null> {
    const { r } = this.options
    return this.table()
      .get(id)
      .do((row: Term) => r.branch(row.eq(null).or(row('expiresAt').le(r.now())), null, row)) as RDatum<KeyRow | null>
  }

  /** The keys' table, with its expiry index, made once per process (safe when several start at once). */
  private setup(): Promise<void> {
    const { r, logger, replicas, shards } = this.options
    const db = this.options.db()
    let byDb = made.get(r)
    if (!byDb) made.set(r, (byDb = new Map()))
    let ready = byDb.get(db)
    if (!ready) {
      const spec = {
        db,
        name: KEYS_TABLE,
        primaryKey: 'id',
        indexes: [{ name: 'expiresAt', fields: ['expiresAt'] }],
        ...(replicas !== undefined ? { replicas } : {}),
        ...(shards !== undefined ? { shards } : {})
      }
      ready = this.run('setup', () => ensureTable(r, spec, logger))
      byDb.set(db, ready)
      ready.catch(() => byDb.delete(db))
    }
    return ready
  }

  private table(): RTable<KeyRow> {
    return this.options.r.db(this.options.db()).table<KeyRow>(KEYS_TABLE)
  }

  private logTable(events: EventLog): RTable<Data> {
    return this.options.r.db(this.options.db()).table<Data>(events.tableName)
  }

  private async run<V>(operation: string, query: () => Promise<V>): Promise<V> {
    try {
      return await query()
    } catch (error) {
      throw toStoreError(error, this.options.logger, `${KEYS_TABLE}.${operation}`)
    }
  }
}

/** The records a write answers: its changes' `field` side, without refused documents or missing records. */
function answerOf(result: Term, field: string): Term {
  return result('changes')
    .default([])
    .filter((change: Term) => change.hasFields('error').not().and(change(field).default(null).ne(null)))
    .map((change: Term) => change(field))
}
