import { randomUUID } from 'node:crypto'
import type { QueryResult } from 'pg'
import { Conflict } from '../../domain/errors/errors.js'
import type { Filter, StoreQuery } from '../../domain/query/ast.js'
import { project } from '../../domain/query/project.js'
import { shapesFromSchema } from '../../domain/schema/field-shapes.js'
import type { JsonSchemaObject } from '../../domain/schema/json-schema.js'
import type { Data, Id, Params } from '../../domain/service/service.js'
import { keyedWriteOf } from '../../domain/store/keyed-write.js'
import type { StoreIndex } from '../../domain/store/store-factory.js'
import type { Page, Store, StoreChange } from '../../domain/store/store.js'
import { compileFilter } from '../../domain/query/compile-filter.js'
import { compilePattern } from '../store-commons/index.js'
import { pgDriver } from './pg-driver.js'
import type { PostgresEventLog } from './postgres-event-log.js'
import { identifier, type PostgresDatabase } from './postgres-database.js'
import { PostgresKeyedWrites } from './postgres-keyed-writes.js'
import { tableSchema } from './postgres-table.js'
import { PostgresWrites, type PostgresWrite, type Statements, type Written } from './postgres-writes.js'
import { hasSearch, parameter, Parameters, SqlCompiler } from './sql-compiler.js'
import { queryShape, StatementCache, type QueryShape } from './statement-cache.js'
import { pushTold, settings, toldFor, type Told } from './trigger-settings.js'

export interface PostgresStoreOptions {
  db: PostgresDatabase
  /** The table, named after the service. */
  table: string
  /** Name of the id field (default 'id'). */
  id?: string
  /** Expression indexes on `doc -> field`, created by setup(). */
  indexes?: readonly StoreIndex[]
  /** The schema of the stored records: fields of one declared type are filtered and sorted without kind guards. */
  schema?: JsonSchemaObject
  /** The database's event log: present, the store publishes every change of its table (`watch`). */
  events?: PostgresEventLog
  /** The active span's `traceparent` (tracing on): logged with each write's events. */
  traceparent?: () => string | undefined
  /** Most writes of one record that share one transaction (group commit, see PostgresWrites; default 100). */
  maxBatch?: number
}

type Row = { doc: Data }
type Keyed = { key: string; doc: Data }

/** The SET of an UPDATE: its text, adding exactly `values`, in order. */
interface SetClause {
  values: unknown[]
  sql: (params: Parameters) => string
}

/** The store's methods, as the log names their statements (`<table>.<method>`). */
const OPERATIONS = ['find', 'page', 'count', 'get', 'create', 'update', 'patch', 'remove'] as const
type Operation = (typeof OPERATIONS)[number]
type WriteOperation = Extract<Operation, 'update' | 'patch' | 'remove'>

/**
 * The Store port over one PostgreSQL table of JSONB documents: `(key text PRIMARY KEY, doc jsonb)`,
 * where `key` is the id's string form (so the REST id "0" finds the numeric id 0, as in memory)
 * and `doc` the whole record, id included. Queries are compiled by SqlCompiler, once per query shape,
 * with every value as a parameter (field names are quoted literals in the text); `$search` is applied
 * with RE2 (the engine the stores share) to the rows the rest of the filter selected in SQL. Events:
 * triggers on the table write every change into the event log in the write's own transaction (see
 * PostgresEventLog); the store names the method's event.
 */
export class PostgresStore<T extends Data = Data> implements Store<T> {
  readonly id: string
  readonly operators = ['$search', '$contains'] as const
  readonly watch?: (listener: (change: StoreChange<T>) => void) => () => void
  readonly tableName: string
  /** Idempotency keys, written in the transaction of the write they key (postgres-keyed-writes.ts). */
  readonly keyedWrites: PostgresKeyedWrites
  private readonly db: PostgresDatabase
  private readonly table: string
  private readonly compiler: SqlCompiler
  /** The text of each read statement, compiled once per query shape. */
  private readonly statements = new StatementCache()
  /** The fields of the declared indexes: a page sorted by one of them may be read in the index's order. */
  private readonly indexed: ReadonlySet<string>
  /** A record's writes that arrive while one of its writes is in flight share the next transaction. */
  private readonly writes: PostgresWrites
  /** Each method's name in the log, made once rather than per call. */
  private readonly operations: Record<Operation, string>
  private ready?: Promise<void>

  constructor(private readonly options: PostgresStoreOptions) {
    this.db = options.db
    this.id = options.id ?? 'id'
    this.tableName = options.table
    this.table = identifier(options.table)
    this.operations = Object.fromEntries(OPERATIONS.map((name) => [name, `${options.table}.${name}`])) as Record<
      Operation,
      string
    >
    this.compiler = new SqlCompiler(shapesFromSchema(options.schema, this.id))
    this.indexed = new Set((options.indexes ?? []).flatMap((index) => index.fields))
    const events = options.events
    this.writes = new PostgresWrites(this.db, () => events?.committed(), options.maxBatch)
    this.keyedWrites = new PostgresKeyedWrites(this.db)
    if (events) {
      this.watch = (listener) => events.subscribe(this.tableName, (change) => listener(change as StoreChange<T>))
    }
  }

  /** Creates the table, its indexes and its event triggers when missing (safe when instances start together). */
  setup(): Promise<void> {
    return (this.ready ??= this.createTable().catch((error: unknown) => {
      this.ready = undefined
      throw error
    }))
  }

  async close(): Promise<void> {}

  async whenWatching(): Promise<void> {
    if (!this.options.events) throw new Error('This store was created without an event log')
    await this.options.events.whenLive()
  }

  async publish(event: string, data: unknown): Promise<void> {
    await this.options.events?.publish(this.tableName, event, data, this.options.traceparent?.())
  }

  async find(query: StoreQuery): Promise<T[]> {
    if (query.limit === 0) return []
    if (hasSearch(query.filter)) return (await this.searched(query)).data
    const { text, values } = this.statements.statement('find', queryShape(query, true), (params) => {
      const where = this.compiler.where(query.filter, params)
      return `SELECT doc FROM ${this.table} WHERE ${where}${this.compiler.pageClause(query, params)}`
    })
    const { rows } = await this.db.query<Row>(this.operations.find, text, values)
    return this.records(rows, query.select)
  }

  async page(query: StoreQuery): Promise<Page<T>> {
    if (hasSearch(query.filter)) return this.searched(query)
    if (query.limit === 0) return { total: await this.count(query.filter), data: [] }
    if (query.sort.length > 0 && !this.indexed.has(query.sort[0]![0])) return this.sortedPage(query)
    // The page may follow an index (the primary key's when unsorted, a declared one's) and stop early:
    // total and page are then two scans in one round trip.
    const { text, values } = this.statements.statement('page', queryShape(query, true), (params) => {
      const where = this.compiler.where(query.filter, params)
      const count = `SELECT count(*) FROM ${this.table} WHERE ${where}`
      const page = `SELECT doc FROM ${this.table} WHERE ${where}${this.compiler.pageClause(query, params)}`
      return `SELECT (${count}) AS total, (SELECT coalesce(json_agg(page.doc), '[]') FROM (${page}) AS page) AS data`
    })
    const { rows } = await this.db.query<{ total: string; data: Data[] }>(this.operations.page, text, values)
    const select = query.select
    // Without $select the page's records are returned as read, as records() returns a find's.
    const data = select ? rows[0]!.data.map((doc) => project(doc, select, this.id)) : rows[0]!.data
    return { total: Number(rows[0]!.total), data: data as T[] }
  }

  /**
   * A page sorted by a field no declared index holds reads every match anyway (to sort them), so one scan
   * also counts them: `count(*) OVER ()` is computed before LIMIT and OFFSET cut the page. An empty page
   * past the first has lost that count: the total is then counted on its own (a second statement, only
   * for a page beyond the last).
   */
  private async sortedPage(query: StoreQuery): Promise<Page<T>> {
    const { text, values } = this.statements.statement('sortedPage', queryShape(query, true), (params) => {
      const where = this.compiler.where(query.filter, params)
      return `SELECT doc, count(*) OVER () AS total FROM ${this.table} WHERE ${where}${this.compiler.pageClause(query, params)}`
    })
    const { rows } = await this.db.query<Row & { total: string }>(this.operations.page, text, values)
    if (rows.length > 0) return { total: Number(rows[0]!.total), data: this.records(rows, query.select) }
    return { total: query.skip > 0 ? await this.count(query.filter) : 0, data: [] }
  }

  async count(filter: Filter): Promise<number> {
    if (hasSearch(filter)) return (await this.candidates(filter)).length
    const { text, values } = this.statements.statement(
      'count',
      this.filterShape(filter),
      (params) => `SELECT count(*) FROM ${this.table} WHERE ${this.compiler.where(filter, params)}`
    )
    const { rows } = await this.db.query<{ count: string }>(this.operations.count, text, values)
    return Number(rows[0]!.count)
  }

  async get(id: Id, query: StoreQuery): Promise<T | null> {
    const filter = query.filter
    // The key's parameter follows the filter's, so that it is pushed onto the shape's values.
    const shape = this.filterShape(filter)
    shape.values.push(parameter(String(id)))
    const { text, values } = this.statements.statement('get', shape, (params) => {
      const where = this.compiler.where(filter, params, true)
      return `SELECT doc FROM ${this.table} WHERE key = ${params.add(String(id), 'text')} AND ${where}`
    })
    // A lookup by key whatever the filter: the same plan for every value (see PostgresDatabase.query).
    const { rows } = await this.db.query<Row>(this.operations.get, text, values, { prepare: true })
    const found = hasSearch(filter) ? rows.filter(({ doc }) => compileFilter(filter, compilePattern)(doc)) : rows
    return found.length > 0 ? (project(found[0]!.doc, query.select, this.id) as T) : null
  }

  /** Inserts every record in one statement (all or nothing); a taken id is a Conflict. Ids are UUIDs where missing. */
  async create(records: Data[], query: Pick<StoreQuery, 'select'>, params?: Params): Promise<T[]> {
    if (records.length === 0) return []
    const texts = records.map((record) =>
      JSON.stringify(record[this.id] == null ? { ...record, [this.id]: randomUUID() } : record)
    )
    let stored = texts.map((text) => JSON.parse(text) as Data)
    const keys = stored.map((record) => String(record[this.id]))
    const told = this.told()
    const keyed = keyedWriteOf(params, this.keyedWrites)
    try {
      if (keyed) {
        const create = { table: this.table, operation: this.operations.create, told, keys, texts, records: stored }
        const { rows, count } = await this.writes.write(this.keyedWrites.create(create, keyed))
        if (count === 0) stored = rows.map((row) => row.doc)
      } else await this.writes.write(this.createWrite(keys, texts, told))
    } catch (error) {
      if (error instanceof Conflict) throw new Conflict(`A record with this ${this.id} already exists`)
      throw error
    }
    return query.select ? stored.map((record) => project(record, query.select, this.id) as T) : (stored as T[])
  }

  /** One INSERT of the records (one record, the common case, is a plain VALUES row; several go in as two arrays). */
  private createWrite(keys: string[], texts: string[], told: Told): PostgresWrite {
    const one = keys.length === 1 && !told.trace
    const values = this.toldValues([], told)
    values.push(one ? parameter(keys[0]) : keys, one ? texts[0] : texts)
    const { text } = this.statements.statement('create', { tokens: [one ? '1' : 'n', told.key], values }, (params) => {
      const { cte, from } = settings(params, told)
      return one
        ? `INSERT INTO ${this.table} (key, doc) VALUES (${params.add(keys[0], 'text')}, ${params.add(texts[0], 'jsonb')})`
        : `${cte}INSERT INTO ${this.table} (key, doc) SELECT row.key, row.doc FROM unnest(${params.add(keys, 'text[]')}, ${params.add(texts, 'jsonb[]')}) AS row(key, doc)${from ? `, ${from}` : ''}`
    })
    const run = (statements: Statements) => written(statements.query(text, values, true))
    const key = keys.length === 1 ? keys[0] : undefined
    return { operation: this.operations.create, key, told, several: false, run }
  }

  async update(id: Id, data: Data, query: StoreQuery, params?: Params): Promise<T | null> {
    const body = { ...data }
    delete body[this.id]
    const text = JSON.stringify(body)
    const [record] = await this.write('update', 'updated', id, query.filter, params, {
      values: [text],
      sql: (params) => {
        const field = pgDriver().escapeLiteral(this.id)
        return `doc = ${params.add(text, 'jsonb')} || jsonb_build_object(${field}, ${this.table}.doc -> ${field})`
      }
    })
    return record ? (project(record.doc, query.select, this.id) as T) : null
  }

  async patch(id: Id | null, data: Data, query: StoreQuery, params?: Params): Promise<T[]> {
    const body = { ...data }
    delete body[this.id]
    const text = JSON.stringify(body)
    // `||` merges at the top level only: nested objects are replaced whole, as in memory.
    const rows = await this.write('patch', 'patched', id, query.filter, params, {
      values: [text],
      sql: (params) => `doc = ${this.table}.doc || ${params.add(text, 'jsonb')}`
    })
    return this.records(rows, query.select)
  }

  async remove(id: Id | null, query: StoreQuery, params?: Params): Promise<T[]> {
    return this.records(await this.write('remove', 'removed', id, query.filter, params), query.select)
  }

  /**
   * One UPDATE (with `set`) or DELETE of the record with `id` (every match when null). With a
   * `$search`, the candidates are locked and tested first, then written by key, in one transaction.
   * The statements' texts are compiled once per shape: their parameters are the filter's, the id,
   * the settings' (`told`), then the set's. Text, values and trace are made here, in the caller's
   * context; the statements run when PostgresWrites sends them (at once, or with the table's next batch).
   */
  private async write(
    operation: WriteOperation,
    event: 'updated' | 'patched' | 'removed',
    id: Id | null,
    filter: Filter,
    params: Params | undefined,
    set?: SetClause
  ): Promise<Row[]> {
    const keyed = keyedWriteOf(params, this.keyedWrites)
    const told = this.told(event)
    const kind = `${operation}${id === null ? '*' : ''}${told.key}`
    const name = this.operations[operation]
    const key = id !== null ? String(id) : undefined
    if (!hasSearch(filter)) {
      const shape = this.filterShape(filter)
      if (id !== null) shape.values.push(parameter(String(id)))
      this.toldValues(shape.values, told, set)
      const { text, values } = this.statements.statement(kind, shape, (params) => {
        const where = this.compiler.where(filter, params)
        return this.writeStatement(params, `${this.byId(id, params)} AND ${where}`, told, set)
      })
      // By id: a lookup by key, the same plan for every value; a multi-record write is planned with its values.
      const run = (statements: Statements) => written(statements.query<Row>(text, values, id !== null))
      const write = this.keyedWrites.keyed({ operation: name, key, told, several: false, run }, keyed)
      return (await this.writes.write(write)).rows
    }
    const run = async (statements: Statements): Promise<Written> => {
      const keys = (await this.lockCandidates(statements, filter, id)).map((row) => row.key)
      if (keys.length === 0) return { rows: [], count: 0 }
      const { text, values } = this.statements.statement(
        `${kind} keys`,
        { tokens: [], values: this.toldValues([keys], told, set) },
        (params) => this.writeStatement(params, `key = ANY(${params.add(keys, 'text[]')})`, told, set)
      )
      return written(statements.query<Row>(text, values, false))
    }
    const write = this.keyedWrites.keyed({ operation: name, key, told, several: true, run }, keyed)
    return (await this.writes.write(write)).rows
  }

  /** The UPDATE (with `set`) or DELETE of the rows `condition` selects, after the settings the triggers read. */
  private writeStatement(params: Parameters, condition: string, told: Told, set?: SetClause): string {
    const { cte, from } = settings(params, told)
    const using = from ? (set ? ` FROM ${from}` : ` USING ${from}`) : ''
    return set
      ? `${cte}UPDATE ${this.table} SET ${set.sql(params)}${using} WHERE ${condition} RETURNING ${this.table}.doc`
      : `${cte}DELETE FROM ${this.table}${using} WHERE ${condition} RETURNING ${this.table}.doc`
  }

  private byId(id: Id | null, params: Parameters): string {
    return id === null ? 'TRUE' : `key = ${params.add(String(id), 'text')}`
  }

  private async lockCandidates(statements: Statements, filter: Filter, id: Id | null): Promise<Keyed[]> {
    const shape = this.filterShape(filter)
    if (id !== null) shape.values.push(parameter(String(id)))
    const { text, values } = this.statements.statement(`lock${id === null ? '*' : ''}`, shape, (params) => {
      const where = this.compiler.where(filter, params, true)
      return `SELECT key, doc FROM ${this.table} WHERE ${this.byId(id, params)} AND ${where} FOR UPDATE`
    })
    const { rows } = await statements.query<Keyed>(text, values, false)
    const matches = compileFilter(filter, compilePattern)
    return rows.filter((row) => matches(row.doc))
  }

  /**
   * A `$search` query: SQL selects and sorts what the rest of the filter matches, RE2 keeps the
   * rows whose pattern matches, and the page is cut here (a full scan, as RethinkDB's `match` is).
   */
  private async searched(query: StoreQuery): Promise<Page<T>> {
    const matches = await this.candidates(query.filter, query.sort)
    const end = query.limit === undefined ? undefined : query.skip + query.limit
    return {
      total: matches.length,
      data: this.records(matches.slice(query.skip, end), query.select)
    }
  }

  private async candidates(filter: Filter, sort: StoreQuery['sort'] = []): Promise<Row[]> {
    const matches = compileFilter(filter, compilePattern)
    // Sorted, not paged: the page is cut after RE2 has tested the rows.
    const sorted: StoreQuery = { filter, sort, skip: 0 }
    const { text, values } = this.statements.statement(
      'candidates',
      queryShape(sorted, true),
      (params) =>
        `SELECT doc FROM ${this.table} WHERE ${this.compiler.where(filter, params, true)}${this.compiler.pageClause(sorted, params)}`
    )
    const { rows } = await this.db.query<Row>(this.operations.find, text, values)
    return rows.filter((row) => matches(row.doc))
  }

  /** The shape of a filter alone (a count's, a get's, a write's). */
  private filterShape(filter: Filter): QueryShape {
    return queryShape({ filter, sort: [], skip: 0 }, false)
  }

  /** What the event triggers must be told in a write's transaction (see trigger-settings.ts). */
  private told(event?: 'updated' | 'patched' | 'removed'): Told {
    return toldFor(this.options.events !== undefined, this.options.traceparent, event)
  }

  /** Pushes the settings' values, then the set's, onto `values`, in the order the statement's text adds them. */
  private toldValues(values: unknown[], told: Told, set?: SetClause): unknown[] {
    pushTold(values, told)
    if (set) values.push(...set.values)
    return values
  }

  private records(rows: Row[], select?: readonly string[]): T[] {
    if (!select) return rows.map((row) => row.doc as T)
    return rows.map((row) => project(row.doc, select, this.id) as T)
  }

  private async createTable(): Promise<void> {
    const { db, indexes, events } = this.options
    await db.schema(`create table ${this.tableName}`, tableSchema(this.tableName, indexes ?? [], events))
    await events?.setup()
  }
}

/** What a write's statement wrote: its RETURNING rows, and how many rows it wrote. */
function written(result: Promise<QueryResult<Row>>): Promise<Written> {
  return result.then(toWritten)
}

function toWritten({ rows, rowCount }: QueryResult<Row>): Written {
  return { rows, count: rowCount ?? rows.length }
}
