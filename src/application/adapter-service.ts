import { BadRequest, MethodNotAllowed, NotFound } from '../domain/errors/errors.js'
import { isMatchAll, type Filter, type StoreQuery } from '../domain/query/ast.js'
import {
  beyond,
  decodeCursor,
  encodeCursor,
  fingerprint,
  keysetSort,
  selectForCursor,
  takeCursorParameters,
  type CursorParameters
} from '../domain/query/cursor.js'
import { parseQuery } from '../domain/query/parse-query.js'
import { project } from '../domain/query/project.js'
import type {
  CursorPage,
  Data,
  Id,
  NullableId,
  Paginated,
  PaginationOptions,
  Params
} from '../domain/service/service.js'
import type { Store, StoreChange } from '../domain/store/store.js'

export interface AdapterServiceOptions {
  /** Page results (`{ default, max }`; `{}` pages without a default size); false or absent: plain arrays. */
  paginate?: false | PaginationOptions
  /** Which methods may act on several records: false (default), true, or a list of 'create' | 'patch' | 'remove'. */
  multi?: boolean | string[]
  /** Custom events the service sends. */
  events?: string[]
  /** Extra operators allowed beyond the common ones; default: those the store declares. */
  operators?: string[]
}

/** The params of an adapter call: besides the usual ones, options for this call only. */
export interface AdapterParams extends Params {
  /**
   * Overrides the service's options for one call, as @feathersjs/adapter-commons does: e.g.
   * `{ paginate: { default: 3 } }` or `{ multi: ['create'] }`. Set by server code (hooks, other
   * services); transports build params from scratch, so clients cannot send it.
   */
  adapter?: Omit<AdapterServiceOptions, 'events'>
}

type MultiMethod = 'create' | 'patch' | 'remove'

/**
 * The generic service over a Store: Feathers adapter semantics (pagination, multi, id + query)
 * once, for every store. The store only ever sees the typed query AST, and applies `$select` itself.
 *
 * As in Feathers adapters, each method has a hook-less twin (`_find`, `_get`, `_create`, `_update`,
 * `_patch`, `_remove`). `app.service(path).find(…)` runs the hooks around `find`; `_find` is not a
 * service method the app wraps, so it reaches the store directly — what a hook or another service
 * calls to skip the hooks. The public methods only delegate (so overriding `_create` changes both),
 * except that `create` refuses arrays without `multi`: `_create` takes them, as Feathers' does, while
 * `_patch` and `_remove` keep their check, since a query with `id` null may touch every record.
 */
export class AdapterService<T extends Data = Data> {
  readonly events: string[]
  readonly watch?: (listener: (change: StoreChange<T>) => void) => () => void
  /** With watch: resolves once the store's change stream is live (App.setup waits for it). */
  readonly whenWatching?: () => Promise<void>
  /** With watch: sends a custom event through the store, so that every process publishes it once. */
  readonly publish?: (event: string, data: unknown) => Promise<void>

  constructor(
    readonly store: Store<T>,
    readonly options: AdapterServiceOptions = {}
  ) {
    this.events = options.events ?? []
    // Bound, so that the App can call them off the service; absent when the store has no change stream.
    this.watch = store.watch?.bind(store)
    this.whenWatching = store.whenWatching?.bind(store)
    this.publish = store.publish?.bind(store)
  }

  get id(): string {
    return this.store.id
  }

  // The public methods hand back the promise of their `_` method: an async function around it would cost every call
  // a promise and turns of the microtask queue.
  find(params: AdapterParams = {}): Promise<T[] | Paginated<T> | CursorPage<T>> {
    return this._find(params)
  }

  get(id: Id, params: AdapterParams = {}): Promise<T> {
    return this._get(id, params)
  }

  /** One record for one object, an array for an array (`multi` must allow it). */
  create(data: Partial<T>, params?: AdapterParams): Promise<T>
  create(data: Partial<T>[], params?: AdapterParams): Promise<T[]>
  create(data: Partial<T> | Partial<T>[], params?: AdapterParams): Promise<T | T[]>
  create(data: Partial<T> | Partial<T>[], params: AdapterParams = {}): Promise<T | T[]> {
    if (Array.isArray(data) && !this.allowsMulti('create', params)) return Promise.reject(multiRefused('create'))
    return this._create(data, params)
  }

  update(id: NullableId, data: Partial<T>, params: AdapterParams = {}): Promise<T> {
    return this._update(id, data, params)
  }

  patch(id: NullableId, data: Partial<T>, params: AdapterParams = {}): Promise<T | T[]> {
    return this._patch(id, data, params)
  }

  remove(id: NullableId, params: AdapterParams = {}): Promise<T | T[]> {
    return this._remove(id, params)
  }

  /**
   * A page (`{ total, limit, skip, data }`) when the call's options paginate, else an array. Like
   * Feathers, a page has no `limit` when neither `$limit` nor a default or max size bounds it.
   * A query naming `$after`, `$before` or `$count` asks for a page of a cursor walk (`CursorPage`).
   */
  async _find(params: AdapterParams = {}): Promise<T[] | Paginated<T> | CursorPage<T>> {
    const { query: raw, cursor } = takeCursorParameters(params.query)
    const query = this.parseRaw(raw, params)
    const { paginate } = this.getOptions(params)
    if (cursor.requested && !paginate)
      throw new BadRequest('$after, $before and $count page a find: this call is not paginated')
    if (paginate) {
      const size = Math.min(query.limit ?? paginate.default ?? Infinity, paginate.max ?? Infinity)
      query.limit = Number.isFinite(size) ? size : undefined
      if (cursor.requested) return this.cursorPage(query, cursor, params)
      if (query.limit === 0) {
        return { total: await this.store.count(query.filter, params), limit: 0, skip: query.skip, data: [] }
      }
      const page = await this.store.page(query, params)
      const limit = query.limit === undefined ? {} : { limit: query.limit }
      return { total: page.total, ...limit, skip: query.skip, data: page.data }
    }
    if (query.limit === 0) return []
    return this.store.find(query, params)
  }

  /**
   * One page of a keyset walk: the records beyond the cursor's position (one more than the limit
   * tells whether another page follows), read backwards for `$before` and then put in sort order.
   * `total` counts the query's matches, whatever the cursor, and only when `$count` is not false.
   */
  private async cursorPage(query: StoreQuery, cursor: CursorParameters, params: AdapterParams): Promise<CursorPage<T>> {
    const sort = keysetSort(query.sort, this.id)
    const print = fingerprint(query.filter, sort)
    const forward = cursor.before === undefined
    const mark = forward ? cursor.after : cursor.before
    const position = mark ? decodeCursor(mark, sort, print) : undefined
    const { limit } = query
    const read: StoreQuery = {
      filter: position ? within(query.filter, beyond(position, sort, forward, this.id)) : query.filter,
      sort: forward ? sort : sort.map(([field, direction]) => [field, direction === 1 ? -1 : 1]),
      skip: query.skip,
      limit: limit === undefined ? undefined : limit + 1,
      select: selectForCursor(query.select, sort)
    }
    const [rows, total] = await Promise.all([
      limit === 0 ? [] : this.store.find(read, params),
      cursor.count ? this.store.count(query.filter, params) : undefined
    ])
    const more = limit !== undefined && rows.length > limit
    const records = more ? rows.slice(0, limit) : rows
    if (!forward) records.reverse()
    const first = records[0]
    const last = records[records.length - 1]
    // Toward the walk's direction another page exists when more rows came; backwards, when it began at a position.
    const ahead = (record: T | undefined) => (more && record ? encodeCursor(record, sort, print) : null)
    const behind = (record: T | undefined) =>
      position || query.skip > 0 ? (record ? encodeCursor(record, sort, print) : mark || null) : null
    return {
      ...(total === undefined ? {} : { total }),
      ...(limit === undefined ? {} : { limit }),
      skip: query.skip,
      data: query.select ? records.map((record) => project(record, query.select, this.id)) : records,
      next: forward ? ahead(last) : behind(last),
      prev: forward ? behind(first) : ahead(first)
    }
  }

  _get(id: Id, params: AdapterParams = {}): Promise<T> {
    let query: StoreQuery
    try {
      query = this.parse(params)
    } catch (error) {
      return Promise.reject(error)
    }
    // A `then` on the store's promise, not an async function: `get` is the most frequent call.
    return this.store.get(id, query, params).then((record) => {
      if (record === null) throw notFound(id)
      return record
    })
  }

  // Like `_get`, `_create` and `_patch` are a `then` on the store's promise rather than async functions: one promise
  // and a turn of the microtask queue less on every write.
  _create(data: Partial<T> | Partial<T>[], params: AdapterParams = {}): Promise<T | T[]> {
    try {
      const query = this.parse(params)
      if (Array.isArray(data)) return data.length === 0 ? Promise.resolve([]) : this.store.create(data, query, params)
      return this.store.create([data], query, params).then(([record]) => record!)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  async _update(id: NullableId, data: Partial<T>, params: AdapterParams = {}): Promise<T> {
    if (id === null || Array.isArray(data))
      throw new BadRequest("You can not replace multiple instances. Did you mean 'patch'?")
    const record = await this.store.update(id, data, this.parse(params), params)
    if (record === null) throw notFound(id)
    return record
  }

  _patch(id: NullableId, data: Partial<T>, params: AdapterParams = {}): Promise<T | T[]> {
    try {
      const query = this.parseForWrite(params)
      if (id === null) {
        this.assertMulti('patch', params)
        return this.store.patch(null, data, query, params)
      }
      return this.store.patch(id, data, query, params).then(([record]) => {
        if (!record) throw notFound(id)
        return record
      })
    } catch (error) {
      return Promise.reject(error)
    }
  }

  async _remove(id: NullableId, params: AdapterParams = {}): Promise<T | T[]> {
    const query = this.parseForWrite(params)
    if (id === null) {
      this.assertMulti('remove', params)
      return this.store.remove(null, query, params)
    }
    const [record] = await this.store.remove(id, query, params)
    if (!record) throw notFound(id)
    return record
  }

  async setup(): Promise<void> {
    await this.store.setup?.()
  }

  async teardown(): Promise<void> {
    await this.store.close?.()
  }

  /**
   * The options of one call: the service's, then `params.paginate`, then `params.adapter` over them
   * (the order of @feathersjs/adapter-commons). Read-only: a call that overrides nothing, as most
   * do, gets the service's own options object rather than a copy.
   */
  getOptions(params: AdapterParams = {}): Readonly<AdapterServiceOptions> {
    if (params.paginate === undefined && params.adapter === undefined) return this.options
    const paginate = params.paginate !== undefined ? params.paginate : this.options.paginate
    return { ...this.options, paginate, ...params.adapter }
  }

  /** The typed query for `params.query`, with the operators this call allows. */
  parse(params: AdapterParams): StoreQuery {
    return this.parseRaw(params.query, params)
  }

  private parseRaw(raw: unknown, params: AdapterParams): StoreQuery {
    return parseQuery(raw, { operators: this.getOptions(params).operators ?? this.store.operators })
  }

  /** `$limit`/`$skip`/`$sort` do not restrict which records patch and remove change. */
  private parseForWrite(params: AdapterParams): StoreQuery {
    const { select, filter } = this.parse(params)
    return { filter, select, sort: [], skip: 0 }
  }

  /** Whether `method` may act on several records in a call with `params` (the `multi` option). */
  allowsMulti(method: MultiMethod, params: AdapterParams = {}): boolean {
    const { multi = false } = this.getOptions(params)
    return multi === true || (Array.isArray(multi) && multi.includes(method))
  }

  private assertMulti(method: MultiMethod, params: AdapterParams): void {
    if (!this.allowsMulti(method, params)) throw multiRefused(method)
  }
}

/** The records of `filter` that also match `cursor`. */
function within(filter: Filter, cursor: Filter): Filter {
  return isMatchAll(filter) ? cursor : { op: 'and', filters: [filter, cursor] }
}

function multiRefused(method: MultiMethod): Error {
  return new MethodNotAllowed(`Can not ${method} multiple entries`)
}

function notFound(id: NullableId): Error {
  return new NotFound(`No record found for id '${id}'`)
}
