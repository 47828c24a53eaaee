import type { R, RDatum, RSelection, RStream, RTable, WriteResult } from 'rethinkdb-ts'
import { BadRequest, Conflict, GeneralError } from '../../domain/errors/errors.js'
import { silentLogger, type Logger } from '../../domain/logger.js'
import { isMatchAll, type Filter, type Query } from '../../domain/query/ast.js'
import { project } from '../../domain/query/project.js'
import type { Data, Id, Params } from '../../domain/service/service.js'
import type { Page, Store, StoreChange } from '../../domain/store/store.js'
import { TableChangefeed, type FeedCursor } from './changefeed.js'
import { applyFilter, applyPage, compileFilter } from './reql-compiler.js'
import { driverMessage, isAlreadyExists, toStoreError } from './rethinkdb-errors.js'

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
  /** Publish every change of the table, including other processes' writes (default true). */
  watch?: boolean
  logger?: Logger
  /** Settles when the pool is open (a factory connecting in the background); setup() waits for it. */
  connected?: Promise<unknown>
}

type Listener = (change: StoreChange<Data>) => void

/**
 * The Store port over a RethinkDB table. Queries are compiled from the AST by reql-compiler; writes
 * use `returnChanges` so every answer takes one round trip; events come from one table changefeed.
 */
export class RethinkDbStore implements Store<Data> {
  readonly id: string
  readonly operators = ['$search', '$contains'] as const
  /** Present only with `watch` (default): the service then emits these instead of its own events. */
  readonly watch?: (listener: Listener) => () => void
  readonly tableName: string
  readonly db?: string
  private readonly r: R
  private readonly logger: Logger
  private readonly listeners = new Set<Listener>()
  private readonly feed?: TableChangefeed
  private readonly connected?: Promise<unknown>

  constructor(options: RethinkDbStoreOptions) {
    this.r = options.r
    this.tableName = options.table
    if (options.db !== undefined) this.db = options.db
    this.id = options.id ?? 'id'
    this.logger = options.logger ?? silentLogger
    if (options.connected) this.connected = options.connected
    if (options.watch ?? true) {
      this.feed = new TableChangefeed({
        open: () => this.table().changes({ includeTypes: true, includeStates: true }).run() as Promise<FeedCursor>,
        idField: this.id,
        logger: this.logger,
        onChange: (change) => {
          for (const listener of this.listeners) listener(change)
        }
      })
      this.watch = (listener) => this.subscribe(listener)
    }
  }

  /** The table as a ReQL term, in `db` when one was given. */
  table(): RTable<Data> {
    return this.db === undefined ? this.r.table<Data>(this.tableName) : this.r.db(this.db).table<Data>(this.tableName)
  }

  /**
   * Creates the database and the table when missing (primary key = the id field). "Already exists"
   * counts as success, so processes starting together do not fail each other. Waits until the
   * table accepts writes, then checks that its primary key really is the id field.
   */
  async init(options: { primaryKey?: string } = {}): Promise<void> {
    const primaryKey = options.primaryKey ?? this.id
    await this.run('init', async () => {
      if (this.db !== undefined) await ignoreAlreadyExists(this.r.dbCreate(this.db).run())
      const database = this.db === undefined ? this.r : this.r.db(this.db)
      await ignoreAlreadyExists(database.tableCreate(this.tableName, { primaryKey }).run())
      await this.table().wait().run()
      const info = await this.table().info().run()
      if (info.primary_key !== primaryKey) {
        throw new GeneralError(`Table '${this.tableName}' has primary key '${String(info.primary_key)}', but the store's id field is '${primaryKey}'`)
      }
    })
  }

  /** Creates the table when missing, so a fresh database works out of the box. */
  async setup(): Promise<void> {
    await this.connected
    await this.init()
  }

  /** Stops the change feed. The pool belongs to whoever opened it and stays open. */
  async close(): Promise<void> {
    this.listeners.clear()
    await this.feed?.stop()
  }

  /** Resolves when the change feed is live (writes after this are published); for tests and probes. */
  whenWatching(): Promise<void> {
    if (!this.feed) return Promise.reject(new Error('This store was created with watch: false'))
    return this.feed.whenLive()
  }

  /** The table filtered by the query's filter: no sort, no pagination (for `params.rethinkdb`). */
  createQuery(query: Pick<Query, 'filter'>): RStream<Data> {
    return applyFilter(this.r, this.table(), query.filter)
  }

  async find(query: Query, params?: Params): Promise<Data[]> {
    if (query.limit === 0) return []
    const filtered = applyFilter(this.r, this.base(params), query.filter)
    return this.run('find', () => applyPage(this.r, filtered, query, this.id).run())
  }

  async page(query: Query, params?: Params): Promise<Page<Data>> {
    const filtered = applyFilter(this.r, this.base(params), query.filter)
    if (query.limit === 0) return { total: await this.run('count', () => filtered.count().run()), data: [] }
    // Total and page in one round trip.
    const term = this.r.expr({ total: filtered.count(), data: applyPage(this.r, filtered, query, this.id).coerceTo('array') })
    return this.run('page', () => term.run() as unknown as Promise<Page<Data>>)
  }

  async count(filter: Filter, params?: Params): Promise<number> {
    return this.run('count', () => applyFilter(this.r, this.base(params), filter).count().run())
  }

  async get(id: Id, query: Query): Promise<Data | null> {
    if (!isStorableKey(id)) return null
    const [record] = await this.run('get', () => applyPage(this.r, this.byId(id, query.filter), { ...query, sort: [], skip: 0, limit: undefined }, this.id).run())
    return record ?? null
  }

  async create(records: Data[]): Promise<Data[]> {
    if (records.length === 0) return []
    // The memory adapter treats a null id as missing; RethinkDB would reject it.
    const prepared = records.map((record) => (record[this.id] == null ? withoutKey(record, this.id) : record))
    const result = await this.run('create', () => this.table().insert(prepared, { returnChanges: true }).run())
    // Rejected documents come back in `changes` with an `error`: never count (or undo) those.
    const created = (result.changes ?? []).flatMap((change) => (change.new_val && !change.error && change.old_val == null ? [change.new_val] : []))
    if (result.errors > 0) await this.failInsert(result, created)
    return this.inInputOrder(prepared, created, result.generated_keys ?? [])
  }

  async update(id: Id, data: Data, query: Query): Promise<Data | null> {
    if (!isStorableKey(id)) return null
    const body = withoutKey(data, this.id)
    const selection = this.byId(id, query.filter)
    // Tag before writing: the feed may deliver the change before the write's own answer arrives.
    const tags = this.feed?.isRunning ? this.feed.tags : undefined
    const expected = tags ? this.candidateIds(id).map((candidate) => ({ candidate, withdraw: tags.expect(candidate) })) : []
    let result: WriteResult<Data>
    try {
      result = await this.run('update', () =>
        selection.replace((row: RDatum<Data>) => this.r.expr(body).merge({ [this.id]: row(this.id) }), { returnChanges: 'always' }).run())
    } catch (error) {
      for (const tag of expected) tag.withdraw()
      throw error
    }
    const record = result.changes?.[0]?.new_val ?? null
    // Only a real replacement produces a change on the feed; drop every other expectation.
    for (const tag of expected) if (result.replaced !== 1 || !sameId(tag.candidate, record?.[this.id])) tag.withdraw()
    this.assertWritten(result, 'update')
    return record && project(record, query.select, this.id)
  }

  async patch(id: Id | null, data: Data, query: Query): Promise<Data[]> {
    if (id !== null && !isStorableKey(id)) return []
    const body = this.patchBody(data)
    const selection = id === null ? this.matching(query.filter) : this.byId(id, query.filter)
    const result = await this.run('patch', () => selection.update(body, { returnChanges: 'always' }).run())
    this.assertWritten(result, 'patch')
    return (result.changes ?? []).flatMap((change) => (change.new_val ? [project(change.new_val, query.select, this.id)] : []))
  }

  async remove(id: Id | null, query: Query): Promise<Data[]> {
    if (id !== null && !isStorableKey(id)) return []
    const selection = id === null ? this.matching(query.filter) : this.byId(id, query.filter)
    const result = await this.run('remove', () => selection.delete({ returnChanges: true }).run())
    this.assertWritten(result, 'remove')
    return (result.changes ?? []).flatMap((change) => (change.old_val ? [project(change.old_val, query.select, this.id)] : []))
  }

  private subscribe(listener: Listener): () => void {
    this.listeners.add(listener)
    this.feed?.start()
    return () => {
      this.listeners.delete(listener)
      if (this.listeners.size === 0) void this.feed?.stop()
    }
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
      body[key] = isPlainObject(value) ? this.r.literal(value) : value
    }
    return body
  }

  private async failInsert(result: WriteResult<Data>, created: Data[]): Promise<never> {
    // One insert is one operation for the caller: undo the records that did go in.
    if (created.length > 0) {
      const keys = created.map((record) => record[this.id])
      await this.table().getAll(this.r.args(keys as (string | number)[])).delete().run().catch((error: unknown) =>
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

async function ignoreAlreadyExists(creation: Promise<unknown>): Promise<void> {
  try {
    await creation
  } catch (error) {
    if (!isAlreadyExists(error)) throw error
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function sameId(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}
