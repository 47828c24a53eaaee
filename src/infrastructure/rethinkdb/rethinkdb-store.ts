import { randomUUID } from 'node:crypto'
import type { R, RDatum, RSelection, RStream, RTable, WriteResult } from 'rethinkdb-ts'
import { silentLogger, type Logger } from '../../domain/logger.js'
import { isMatchAll, type Filter, type StoreQuery } from '../../domain/query/ast.js'
import { project } from '../../domain/query/project.js'
import type { Data, Id, Params } from '../../domain/service/service.js'
import type { Page, Store, StoreChange } from '../../domain/store/store.js'
import { keyedWriteOf } from '../../domain/store/keyed-write.js'
import { RethinkDbKeyedWrites } from './rethinkdb-keyed-writes.js'
import { insertKeyed, type CreateOutcome, type KeyedCreate } from './rethinkdb-keyed-creates.js'
import { EventLog, type WriteEvent } from './event-log.js'
import { shapesFromSchema, type FieldShapes } from '../../domain/schema/field-shapes.js'
import { isRecord } from '../../domain/objects.js'
import { QueryPlanner } from './query-plan.js'
import { ReqlCompiler } from './reql-compiler.js'
import { GroupCommit } from '../store-commons/event-log/index.js'
import {
  candidateKeys,
  customBase,
  insertError,
  isStorableKey,
  splitInsert,
  withoutKey,
  type InsertOutcome
} from './record-keys.js'
import { driverMessage, toStoreError } from './rethinkdb-errors.js'
import { ensureTable, type IndexSpec } from './rethinkdb-tables.js'
import type { RethinkDbStoreOptions } from './rethinkdb-store-options.js'
import { TableWatch } from './table-watch.js'

export type { RethinkDbStoreOptions } from './rethinkdb-store-options.js'

/**
 * Run options of a read with a limit. The server asks each of a table's hash shards (8 on a server)
 * for a first batch of a quarter of its share of the limit (`first_batch_scaledown_factor` 4); a
 * page's records are not spread evenly among the shards, so where one holds more of them than that,
 * the server asks every shard again before it can answer. A page read in index order took 1 to 5
 * such rounds depending on where it starts (100,000 records, 26 rows: 1.7 on average; page 1 two,
 * the newest-first page 1,000 three, and 1.5× the time). A half keeps a page to one round wherever
 * it starts (1.00 on average for 26 rows, at most 1.03 for 11 or 101) and costs no more than the
 * default's page 1 (BENCHMARKS.md, cursor pagination).
 */
export const LIMITED_READ = { firstBatchScaledownFactor: 2 } as const

/** An insert answers the records as stored (with their generated keys). */
const INSERT = { returnChanges: true } as const

/**
 * The Store port over a RethinkDB table. Queries are planned by query-plan (which index, if any) and
 * compiled from the AST by reql-compiler; writes use `returnChanges` so every answer takes one round
 * trip. Events: each write logs its changes in
 * the database's event log within the same query, every instance follows the log (see EventLog),
 * and the table's own changefeed adds the writes nobody logged (see DirectWrites).
 */
export class RethinkDbStore<T extends Data = Data> implements Store<T> {
  readonly id: string
  readonly operators = ['$search', '$contains'] as const
  /** Present only with `watch` (default): the service then emits these instead of its own events. */
  readonly watch?: (listener: (change: StoreChange<T>) => void) => () => void
  readonly tableName: string
  readonly db?: string
  private readonly r: R
  private readonly logger: Logger
  private readonly events?: EventLog
  private readonly watcher?: TableWatch
  private readonly connected?: Promise<unknown>
  private readonly indexes: IndexSpec[]
  private readonly shapes: FieldShapes
  private readonly compiler: ReqlCompiler
  private readonly planner: QueryPlanner
  /** Creates that arrive while one is being written go out together as the next insert, keyed ones too. */
  private readonly creates: GroupCommit<Data, CreateOutcome, KeyedCreate>
  private tableTerm?: RTable<Data>
  /** Idempotency keys: a keyed write's commit is its log row, which carries the key (rethinkdb-keyed-writes.ts). */
  readonly keyedWrites: RethinkDbKeyedWrites

  constructor(private readonly options: RethinkDbStoreOptions) {
    this.r = options.r
    this.tableName = options.table
    if (options.db !== undefined) this.db = options.db
    this.id = options.id ?? 'id'
    this.indexes = (options.indexes ?? []).map(({ fields, name }) => ({ fields, name: name ?? fields.join('_') }))
    this.shapes = shapesFromSchema(options.schema, this.id)
    this.compiler = new ReqlCompiler(this.r, this.shapes)
    this.planner = new QueryPlanner(this.r, () => this.table(), this.compiler, this.shapes, this.id, this.indexes)
    this.logger = options.logger ?? silentLogger
    if (options.connected) this.connected = options.connected
    this.creates = new GroupCommit({ run: (calls, tags) => this.insert(calls, tags) })
    if (options.watch ?? true) {
      this.events = options.events ?? EventLog.of(this.r, this.database(), this.logger)
      const watcher = new TableWatch({
        tableName: this.tableName,
        idField: this.id,
        events: this.events,
        ...((options.directWrites ?? true) ? { directWrites: () => this.table() } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.metrics ? { metrics: options.metrics } : {}),
        logger: this.logger
      })
      this.watcher = watcher
      // The table's rows are records of this store: the feeds' changes carry T.
      this.watch = (listener) => watcher.subscribe(listener as (change: StoreChange<Data>) => void)
    }
    this.keyedWrites = new RethinkDbKeyedWrites({
      r: this.r,
      db: () => this.database(),
      ...(this.events ? { events: this.events } : {}),
      logger: this.logger,
      ...(options.replicas !== undefined ? { replicas: options.replicas } : {}),
      ...(options.shards !== undefined ? { shards: options.shards } : {})
    })
  }

  /** The table as a ReQL term, in `db` when one was given. */
  table(): RTable<Data> {
    // Terms are immutable: one is built once and reused by every query (as hand-written code does).
    return (this.tableTerm ??=
      this.db === undefined ? this.r.table<Data>(this.tableName) : this.r.db(this.db).table<Data>(this.tableName))
  }

  /**
   * Creates the database and the table when missing (primary key = the id field), with its indexes
   * and replication, safely when several processes start at once (see ensureTable); repairs
   * duplicate tables; waits until the table accepts writes.
   */
  async init(options: { primaryKey?: string } = {}): Promise<void> {
    await this.run('init', () =>
      ensureTable(
        this.r,
        {
          db: this.database(),
          name: this.tableName,
          primaryKey: options.primaryKey ?? this.id,
          indexes: this.indexes,
          ...(this.options.replicas !== undefined ? { replicas: this.options.replicas } : {}),
          ...(this.options.shards !== undefined ? { shards: this.options.shards } : {})
        },
        this.logger
      )
    )
    await this.run('init', () => this.events?.setup() ?? Promise.resolve())
  }

  /** Creates the tables when missing, so a fresh database works out of the box. */
  async setup(): Promise<void> {
    await this.connected
    await this.init()
  }

  /** Stops the change feeds. The pool belongs to whoever opened it and stays open. */
  async close(): Promise<void> {
    await this.watcher?.stop()
  }

  /** Resolves when every change made from now on will be published (503 after `timeoutMs`). */
  async whenWatching(): Promise<void> {
    if (!this.watcher) throw new Error('This store was created with watch: false')
    await this.watcher.whenLive()
  }

  /** Whether the change feeds are live right now (for health probes); true without `watch`. */
  get isWatching(): boolean {
    return this.watcher?.isLive ?? true
  }

  /** Logs a custom event: every instance watching this table publishes it once. */
  async publish(event: string, data: unknown): Promise<void> {
    if (!this.events) return
    await this.run('publish', () => this.events!.publish(this.tableName, event, data))
  }

  /** The table filtered by the query's filter: no sort, no pagination (for `params.rethinkdb`). */
  createQuery(query: Pick<StoreQuery, 'filter'>): RStream<Data> {
    return this.planner.matching(query.filter)
  }

  /**
   * The ReQL that `find` runs for this query (to read or explain it): planned on the table, or on `params.rethinkdb`.
   */
  findQuery(query: StoreQuery, params?: Params): RStream<Data> {
    const custom = customBase(params)
    return custom
      ? this.compiler.page(this.compiler.filter(custom, query.filter), query, this.id)
      : this.planner.find(query)
  }

  async find(query: StoreQuery, params?: Params): Promise<T[]> {
    if (query.limit === 0) return []
    const options = query.limit === undefined ? undefined : LIMITED_READ
    return this.rows(await this.run('find', () => this.findQuery(query, params).run(options)))
  }

  async page(query: StoreQuery, params?: Params): Promise<Page<T>> {
    const total = this.matches(query.filter, params).count()
    if (query.limit === 0) return { total: await this.run('count', () => total.run()), data: [] }
    // Total and page in one round trip.
    const term = this.r.expr({ total, data: this.findQuery(query, params).coerceTo('array') })
    return this.run(
      'page',
      () => term.run(query.limit === undefined ? undefined : LIMITED_READ) as unknown as Promise<Page<T>>
    )
  }

  async count(filter: Filter, params?: Params): Promise<number> {
    return this.run('count', () => this.matches(filter, params).count().run())
  }

  /** Without a filter, a plain `table.get(id)` (with the other form of a numeric id as its default). */
  async get(id: Id, query: StoreQuery): Promise<T | null> {
    const [exact, other] = candidateKeys(id, this.shapes(this.id))
    if (exact === undefined || !isStorableKey(exact)) return null
    const table = this.table()
    // get answers null for a missing key, and default() then looks up the other form.
    let term = (other === undefined
      ? table.get(exact)
      : table.get(exact).default(table.get(other))) as unknown as RDatum
    if (!isMatchAll(query.filter)) {
      const test = this.compiler.predicate(query.filter)
      term = term.do((doc: RDatum) => this.r.branch(doc.eq(null), null, test(doc), doc, null))
    }
    const record = await this.run('get', () => term.run() as Promise<Data | null>)
    return record ? this.rows([record], query.select)[0]! : null
  }

  /**
   * Inserts the records as one operation for the caller (all or nothing). Concurrent creates share
   * one insert (group commit, see GroupCommit): with the event log, one counter update and one log
   * insert for all of them.
   */
  async create(records: Data[], query: Pick<StoreQuery, 'select'>, params?: Params): Promise<T[]> {
    if (records.length === 0) return []
    // The memory adapter treats a null id as missing; RethinkDB would reject it.
    const prepared = records.map((record) => (record[this.id] == null ? withoutKey(record, this.id) : record))
    const keyed = keyedWriteOf(params, this.keyedWrites)
    let outcome: InsertOutcome
    if (keyed) {
      // A keyed create goes in the group commit too, its records' ids drawn now (its answer among the log row's).
      const records = prepared.map((record) =>
        record[this.id] == null ? { ...record, [this.id]: randomUUID() } : record
      )
      const written = await this.keyedWrites.create(keyed, (tag) =>
        this.run('create', () => this.creates.submit(records, tag))
      )
      if ('replay' in written) return this.rows(written.replay, query.select)
      outcome = written.outcome as InsertOutcome
    } else outcome = (await this.run('create', () => this.creates.submit(prepared))) as InsertOutcome
    if (outcome.error !== undefined) await this.failInsert(outcome.created, outcome.error)
    return this.rows(outcome.created, query.select)
  }

  async update(id: Id, data: Data, query: StoreQuery, params?: Params): Promise<T | null> {
    const selection = this.byId(id, query.filter)
    if (!selection) return null
    const body = withoutKey(data, this.id)
    // A get of a missing key replaces null: leave it null (nothing is written).
    const replace = selection.replace(
      (row: RDatum<Data>) => this.r.branch(row.eq(null), null, this.r.expr(body).merge({ [this.id]: row(this.id) })),
      { returnChanges: 'always' }
    )
    const written = await this.write('update', replace, 'updated', params)
    if ('replay' in written) return written.replay[0] ? this.rows(written.replay, query.select)[0]! : null
    const { result } = written
    this.assertWritten(result, 'update')
    const record = result.changes?.[0]?.new_val ?? null
    return record && this.rows([record], query.select)[0]!
  }

  async patch(id: Id | null, data: Data, query: StoreQuery, params?: Params): Promise<T[]> {
    const selection =
      id === null ? (this.planner.matching(query.filter) as RSelection<Data>) : this.byId(id, query.filter)
    if (!selection) return []
    const body = this.patchBody(data)
    const written = await this.write('patch', selection.update(body, { returnChanges: 'always' }), 'patched', params)
    if ('replay' in written) return this.rows(written.replay, query.select)
    const { result } = written
    this.assertWritten(result, 'patch')
    return this.rows(
      (result.changes ?? []).flatMap((change) => (change.new_val ? [change.new_val] : [])),
      query.select
    )
  }

  async remove(id: Id | null, query: StoreQuery, params?: Params): Promise<T[]> {
    const selection =
      id === null ? (this.planner.matching(query.filter) as RSelection<Data>) : this.byId(id, query.filter)
    if (!selection) return []
    const written = await this.write('remove', selection.delete({ returnChanges: true }), 'removed', params)
    if ('replay' in written) return this.rows(written.replay, query.select)
    const { result } = written
    this.assertWritten(result, 'remove')
    return this.rows(
      (result.changes ?? []).flatMap((change) => (change.old_val ? [change.old_val] : [])),
      query.select
    )
  }

  /** Rows of the table are this store's records; `select` projects rows that come back whole (write results). */
  private rows(rows: Data[], select?: readonly string[]): T[] {
    return rows.map((row) => project(row, select, this.id) as T)
  }

  /**
   * Runs a write; with `watch`, its events go into the event log in the same query. With a key (`params`), under it:
   * the stored answer of a repeat (`replay`) instead of writing.
   */
  private async write(
    operation: string,
    term: RDatum<WriteResult<Data>>,
    event: WriteEvent,
    params?: Params
  ): Promise<{ result: WriteResult<Data> } | { replay: Data[] }> {
    const keyed = keyedWriteOf(params, this.keyedWrites)
    const table = { name: this.tableName, term: this.table(), idField: this.id }
    if (keyed) return this.keyedWrites.write(keyed, term, { table, event })
    const query = this.events ? this.events.recording(term, table, event) : term
    return { result: await this.run(operation, () => query.run()) }
  }

  /** The database the table lives in: `db`, else the pool's default database. */
  private database(): string {
    if (this.db !== undefined) return this.db
    const master = this.r.getPoolMaster() as unknown as { connParam?: { db?: string } } | undefined
    return master?.connParam?.db ?? 'test'
  }

  private matches(filter: Filter, params?: Params): RStream<Data> {
    const custom = customBase(params)
    return custom ? this.compiler.filter(custom, filter) : this.planner.matching(filter)
  }

  /**
   * The record with this id, as a selection that can be written (undefined: no record can have this
   * id). Without a filter it is a plain `table.get`; REST ids arrive as strings ("0") while the key
   * may be the number 0: the exact key wins, else the other form is used — never both records.
   */
  private byId(id: Id, filter: Filter): RSelection<Data> | undefined {
    const [exact, other] = candidateKeys(id, this.shapes(this.id))
    if (exact === undefined || !isStorableKey(exact)) return undefined
    const table = this.table()
    const key = other === undefined ? exact : this.r.branch(table.get(exact).ne(null), exact, other)
    if (isMatchAll(filter)) return table.get(key) as unknown as RSelection<Data>
    return this.compiler.filter(table.getAll(key), filter) as RSelection<Data>
  }

  /** Patch merges at the top level only (like the memory adapter): nested objects are replaced whole. */
  private patchBody(data: Data): Data {
    const body: Data = {}
    for (const [key, value] of Object.entries(data)) {
      if (key === this.id) continue
      body[key] = isRecord(value) ? this.r.literal(value) : value
    }
    return body
  }

  /** One insert of several callers' records, and each caller's outcome. */
  private async insert(calls: Data[][], tags: (KeyedCreate | undefined)[]): Promise<CreateOutcome[]> {
    if (tags.some((tag) => tag !== undefined))
      return insertKeyed(
        this.keyedWrites.tables(),
        { table: this.table(), tableName: this.tableName, idField: this.id },
        calls,
        tags
      )
    const records = calls.length === 1 ? calls[0]! : calls.flat()
    const { result } = (await this.write('create', this.table().insert(records, INSERT), 'created')) as {
      result: WriteResult<Data>
    }
    return splitInsert(calls, result, this.id)
  }

  private async failInsert(created: Data[], message: string): Promise<never> {
    // One insert is one operation for the caller: undo the records that did go in.
    if (created.length > 0) {
      const keys = created.map((record) => record[this.id])
      // Through the event log: whoever saw the records created sees them removed.
      const undo = this.table()
        .getAll(this.r.args(keys as (string | number)[]))
        .delete({ returnChanges: true })
      await this.write('undo insert', undo, 'removed').catch((error: unknown) =>
        this.logger.error('RethinkDB could not undo a failed insert', { error: driverMessage(error), keys })
      )
    }
    throw insertError(message, this.id)
  }

  private assertWritten(result: WriteResult<Data>, operation: string): void {
    if (result.errors > 0) {
      this.logger.error('RethinkDB write failed', { operation, table: this.tableName, error: result.first_error })
      throw toStoreError(new Error(result.first_error ?? 'write failed'), silentLogger, operation)
    }
  }

  private async run<T>(operation: string, query: () => Promise<T>): Promise<T> {
    try {
      return await query()
    } catch (error) {
      throw toStoreError(error, this.logger, `${this.tableName}.${operation}`)
    }
  }
}
