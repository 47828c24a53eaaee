import { BadRequest, MethodNotAllowed, NotFound } from '../domain/errors/errors.js'
import type { StoreQuery } from '../domain/query/ast.js'
import { parseQuery } from '../domain/query/parse-query.js'
import type { Data, Id, NullableId, Paginated, PaginationOptions, Params } from '../domain/service/service.js'
import type { Store, StoreChange } from '../domain/store/store.js'

export interface AdapterServiceOptions {
  paginate?: PaginationOptions
  /** Which methods may act on several records: false (default), true, or a list of 'create' | 'patch' | 'remove'. */
  multi?: boolean | string[]
  /** Custom events the service sends. */
  events?: string[]
  /** Extra operators allowed beyond the common ones; default: those the store declares. */
  operators?: string[]
}

/**
 * The generic service over a Store: Feathers adapter semantics (pagination, multi, id + query)
 * once, for every store. The store only ever sees the typed query AST, and applies `$select` itself.
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

  async find(params: Params = {}): Promise<T[] | Paginated<T>> {
    const query = this.parse(params)
    const paginate = params.paginate !== undefined ? params.paginate : this.options.paginate
    const max = paginate ? paginate.max : undefined
    if (paginate) {
      const limit = Math.min(query.limit ?? paginate.default ?? Infinity, max ?? Infinity)
      query.limit = Number.isFinite(limit) ? limit : undefined
      if (query.limit === 0) {
        return { total: await this.store.count(query.filter, params), limit: 0, skip: query.skip, data: [] }
      }
      const page = await this.store.page(query, params)
      return { total: page.total, limit: query.limit ?? page.total, skip: query.skip, data: page.data }
    }
    if (query.limit === 0) return []
    return this.store.find(query, params)
  }

  async get(id: Id, params: Params = {}): Promise<T> {
    const record = await this.store.get(id, this.parse(params), params)
    if (record === null) throw notFound(id)
    return record
  }

  async create(data: Partial<T> | Partial<T>[], params: Params = {}): Promise<T | T[]> {
    const query = this.parse(params)
    if (Array.isArray(data)) {
      this.assertMulti('create')
      if (data.length === 0) return []
      return this.store.create(data, query, params)
    }
    const [record] = await this.store.create([data], query, params)
    return record!
  }

  async update(id: NullableId, data: Partial<T>, params: Params = {}): Promise<T> {
    if (id === null || Array.isArray(data))
      throw new BadRequest("You can not replace multiple instances. Did you mean 'patch'?")
    const record = await this.store.update(id, data, this.parse(params), params)
    if (record === null) throw notFound(id)
    return record
  }

  async patch(id: NullableId, data: Partial<T>, params: Params = {}): Promise<T | T[]> {
    const query = this.parseForWrite(params)
    if (id === null) {
      this.assertMulti('patch')
      return this.store.patch(null, data, query, params)
    }
    const [record] = await this.store.patch(id, data, query, params)
    if (!record) throw notFound(id)
    return record
  }

  async remove(id: NullableId, params: Params = {}): Promise<T | T[]> {
    const query = this.parseForWrite(params)
    if (id === null) {
      this.assertMulti('remove')
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

  /** The typed query for `params.query`, with the operators this service allows. */
  parse(params: Params): StoreQuery {
    return parseQuery(params.query, { operators: this.options.operators ?? this.store.operators })
  }

  /** `$limit`/`$skip`/`$sort` do not restrict which records patch and remove change. */
  private parseForWrite(params: Params): StoreQuery {
    const { select, filter } = this.parse(params)
    return { filter, select, sort: [], skip: 0 }
  }

  /** Whether `method` may act on several records (the `multi` option). */
  allowsMulti(method: 'create' | 'patch' | 'remove'): boolean {
    const { multi = false } = this.options
    return multi === true || (Array.isArray(multi) && multi.includes(method))
  }

  private assertMulti(method: 'create' | 'patch' | 'remove'): void {
    if (!this.allowsMulti(method)) throw new MethodNotAllowed(`Can not ${method} multiple entries`)
  }
}

function notFound(id: NullableId): Error {
  return new NotFound(`No record found for id '${id}'`)
}
