import type { R, RDatum, RSelection, RStream, RTable, WriteResult } from 'rethinkdb-ts'
import { BadRequest, Conflict, GeneralError } from '../../domain/errors/errors.js'
import { silentLogger, type Logger } from '../../domain/logger.js'
import { isMatchAll, type Filter, type StoreQuery } from '../../domain/query/ast.js'
import { project } from '../../domain/query/project.js'
import type { Data, Id, Params } from '../../domain/service/service.js'
import type { Page, Store, StoreChange } from '../../domain/store/store.js'
import { EventLog, type WriteEvent } from './event-log.js'
import { isRecord } from './is-record.js'
import { applyFilter, applyPage, compileFilter } from './reql-compiler.js'
import { driverMessage, toStoreError } from './rethinkdb-errors.js'
import { ensureTable, type IndexSpec } from './rethinkdb-tables.js'
import { TableWatch } from './table-watch.js'

export interface RethinkDbStoreOptions {
  /**
   * The rethinkdb-ts `r` with an open pool (see connectRethinkDb). The store runs queries on it but
   * never drains it: whoever opened the pool closes it, after closing the stores.
   */
  r: R
  /** Table name (the spec's `name`). */
  table: string
  /** Database; defaults to the pool's default database. `init()` creates it when missing. */
  db?: string
  /** Id field; must be the table's primary key (default 'id'). */
  id?: string
  /**
   * Publish every change of the table, on every instance, exactly once (default true): the store's
   * writes go through the event log, and writes made directly in the database are picked up too.
   */
  watch?: boolean
  /** The database's event log; shared by every store of the database (one follower per process). */
  events?: EventLog
  /** Also publish writes made directly in the database, e.g. from the admin UI (default true). */
  directWrites?: boolean
  /** Secondary indexes init() creates and waits for. */
  indexes?: IndexSpec[]
  /** Replication of the table in a cluster; init() applies it when the table differs. */
  replicas?: number
  shards?: number
  /** How long setup() waits for the change feeds to go live (default 30 s). */
  timeoutMs?: number
  logger?: Logger
  /** Settles when the pool is open (a factory connecting in the background); setup() waits for it. */
  connected?: Promise<unknown>
}

/**
 * The Store port over a RethinkDB table. Queries are compiled from the AST by reql-compiler; writes
 * use `returnChanges` so every answer takes one round trip. Events: each write logs its changes in
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

  constructor(private readonly options: RethinkDbStoreOptions) {
    this.r = options.r
    this.tableName = options.table
    if (options.db !== undefined) this.db = options.db
    this.id = options.id ?? 'id'
    this.logger = options.logger ?? silentLogger
    if (options.connected) this.connected = options.connected
    if (options.watch ?? true) {
      this.events = options.events ?? EventLog.of(this.r, this.database(), this.logger)
      const watcher = new TableWatch({
        tableName: this.tableName,
        idField: this.id,
        events: this.events,
        ...((options.directWrites ?? true) ? { directWrites: () => this.table() } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        logger: this.logger
      })
      this.watcher = watcher
      // The table's rows are records of this store: the feeds' changes carry T.
      this.watch = (listener) => watcher.subscribe(listener as (change: StoreChange<Data>) => void)
    }
  }

  /** The table as a ReQL term, in `db` when one was given. */
  table(): RTable<Data> {
    return this.db === undefined ? this.r.table<Data>(this.tableName) : this.r.db(this.db).table<Data>(this.tableName)
  }

  /**
   * Creates the database and the table when missing (primary key = the id field), with its indexes
   * and replication, safely when several processes start at once (see ensureTable); repairs
   * duplicate tables; waits until the table accepts writes.
   */
  async init(options: { primaryKey?: string } = {}): Promise<void> {
    await this.run('init', () => ensureTable(this.r, {
      db: this.database(),
      name: this.tableName,
      primaryKey: options.primaryKey ?? this.id,
      ...(this.options.indexes ? { indexes: this.options.indexes } : {}),
      ...(this.options.replicas !== undefined ? { replicas: this.options.replicas } : {}),
      ...(this.options.shards !== undefined ? { shards: this.options.shards } : {})
    }, this.logger))
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
    return applyFilter(this.r, this.table(), query.filter)
  }

  async find(query: StoreQuery, params?: Params): Promise<T[]> {
    if (query.limit === 0) return []
    const filtered = applyFilter(this.r, this.base(params), query.filter)
    return this.rows(await this.run('find', () => applyPage(this.r, filtered, query, this.id).run()))
  }

  async page(query: StoreQuery, params?: Params): Promise<Page<T>> {
    const filtered = applyFilter(this.r, this.base(params), query.filter)
    if (query.limit === 0) return { total: await this.run('count', () => filtered.count().run()), data: [] }
    // Total and page in one round trip.
    const term = this.r.expr({ total: filtered.count(), data: applyPage(this.r, filtered, query, this.id).coerceTo('array') })
    return this.run('page', () => term.run() as unknown as Promise<Page<T>>)
  }

  async count(filter: Filter, params?: Params): Promise<number> {
    return this.run('count', () => applyFilter(this.r, this.base(params), filter).count().run())
  }

  async get(id: Id, query: StoreQuery): Promise<T | null> {
    if (!isStorableKey(id)) return null
    const [record] = await this.run('get', () => applyPage(this.r, this.byId(id, query.filter), { ...query, sort: [], skip: 0, limit: undefined }, this.id).run())
    return record ? this.rows([record])[0]! : null
  }

  async create(records: Data[], query: Pick<StoreQuery, 'select'>): Promise<T[]> {
    if (records.length === 0) return []
    // The memory adapter treats a null id as missing; RethinkDB would reject it.
    const prepared = records.map((record) => (record[this.id] == null ? withoutKey(record, this.id) : record))
    const result = await this.write('create', this.table().insert(prepared, { returnChanges: true }), 'created')
    // Rejected documents come back in `changes` with an `error`: never count (or undo) those.
    const created = (result.changes ?? []).flatMap((change) => (change.new_val && !change.error && change.old_val == null ? [change.new_val] : []))
    if (result.errors > 0) await this.failInsert(result, created)
    return this.rows(this.inInputOrder(prepared, created, result.generated_keys ?? []), query.select)
  }

  async update(id: Id, data: Data, query: StoreQuery): Promise<T | null> {
    if (!isStorableKey(id)) return null
    const body = withoutKey(data, this.id)
    const replace = this.byId(id, query.filter)
      .replace((row: RDatum<Data>) => this.r.expr(body).merge({ [this.id]: row(this.id) }), { returnChanges: 'always' })
    const result = await this.write('update', replace, 'updated')
    this.assertWritten(result, 'update')
    const record = result.changes?.[0]?.new_val ?? null
    return record && this.rows([record], query.select)[0]!
  }

  async patch(id: Id | null, data: Data, query: StoreQuery): Promise<T[]> {
    if (id !== null && !isStorableKey(id)) return []
    const body = this.patchBody(data)
    const selection = id === null ? this.matching(query.filter) : this.byId(id, query.filter)
    const result = await this.write('patch', selection.update(body, { returnChanges: 'always' }), 'patched')
    this.assertWritten(result, 'patch')
    return this.rows((result.changes ?? []).flatMap((change) => (change.new_val ? [change.new_val] : [])), query.select)
  }

  async remove(id: Id | null, query: StoreQuery): Promise<T[]> {
    if (id !== null && !isStorableKey(id)) return []
    const selection = id === null ? this.matching(query.filter) : this.byId(id, query.filter)
    const result = await this.write('remove', selection.delete({ returnChanges: true }), 'removed')
    this.assertWritten(result, 'remove')
    return this.rows((result.changes ?? []).flatMap((change) => (change.old_val ? [change.old_val] : [])), query.select)
  }

  /** Rows of the table are this store's records; `select` projects rows that come back whole (write results). */
  private rows(rows: Data[], select?: readonly string[]): T[] {
    return rows.map((row) => project(row, select, this.id) as T)
  }

  /** Runs a write; with `watch`, its events go into the event log in the same query. */
  private write(operation: string, term: RDatum<WriteResult<Data>>, event: WriteEvent): Promise<WriteResult<Data>> {
    const query = this.events ? this.events.recording(term, this.tableName, event) : term
    return this.run(operation, () => query.run())
  }

  /** The database the table lives in: `db`, else the pool's default database. */
  private database(): string {
    if (this.db !== undefined) return this.db
    const master = this.r.getPoolMaster() as unknown as { connParam?: { db?: string } } | undefined
    return master?.connParam?.db ?? 'test'
  }

  /** `params.rethinkdb` (set by a hook, e.g. from createQuery) replaces the table as the base query. */
  private base(params?: Params): RStream<Data> {
    const custom = params?.rethinkdb
    if (custom === undefined || custom === null) return this.table()
    if (typeof custom !== 'function' || typeof (custom as { run?: unknown }).run !== 'function') {
      throw new GeneralError('params.rethinkdb must be a ReQL sequence (for example from createQuery)')
    }
    return custom as RStream<Data>
  }

  private matching(filter: Filter): RSelection<Data> {
    const table = this.table()
    return isMatchAll(filter) ? table : table.filter(compileFilter(this.r, filter))
  }

  /**
   * The record with this id, as a selection that can be written. REST ids arrive as strings ("0")
   * while the stored key may be the number 0 (and the other way round): the exact key wins, else the
   * other form is used — one round trip, and never both records.
   */
  private byId(id: Id, filter: Filter): RSelection<Data> {
    const [exact, other] = this.candidateIds(id)
    const key = other === undefined ? exact : this.r.branch(this.table().get(exact).ne(null), exact, other)
    const selection = this.table().getAll(key)
    return isMatchAll(filter) ? selection : selection.filter(compileFilter(this.r, filter))
  }

  private candidateIds(id: Id): Id[] {
    if (typeof id === 'number') return Number.isFinite(id) ? [id, String(id)] : [id]
    const number = Number(id)
    return Number.isFinite(number) && String(number) === id ? [id, number] : [id]
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

  private async failInsert(result: WriteResult<Data>, created: Data[]): Promise<never> {
    // One insert is one operation for the caller: undo the records that did go in.
    if (created.length > 0) {
      const keys = created.map((record) => record[this.id])
      // Through the event log: whoever saw the records created sees them removed.
      const undo = this.table().getAll(this.r.args(keys as (string | number)[])).delete({ returnChanges: true })
      await this.write('undo insert', undo, 'removed').catch((error: unknown) =>
        this.logger.error('RethinkDB could not undo a failed insert', { error: driverMessage(error), keys }))
    }
    const message = result.first_error ?? 'Insert failed'
    if (/duplicate primary key/i.test(message)) throw new Conflict(`A record with this ${this.id} already exists`)
    throw new BadRequest(`Cannot store the record: ${message}`)
  }

  private inInputOrder(prepared: Data[], created: Data[], generated: string[]): Data[] {
    const byKey = new Map(created.map((record) => [JSON.stringify(record[this.id]), record]))
    let next = 0
    const ordered = prepared.map((record) => byKey.get(JSON.stringify(record[this.id] ?? generated[next++])))
    return ordered.every((record): record is Data => record !== undefined) ? ordered : created
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

/**
 * RethinkDB rejects primary keys over 127 bytes with a query error, even in `get`: such an id
 * cannot be stored, so it finds nothing (a long id in a URL is a 404, not a 500).
 */
function isStorableKey(id: Id): boolean {
  return typeof id !== 'string' || Buffer.byteLength(id) <= 127
}

function withoutKey(data: Data, key: string): Data {
  const { [key]: _removed, ...rest } = data
  return rest
}

