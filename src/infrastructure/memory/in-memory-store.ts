import { Conflict } from '../../domain/errors/errors.js'
import { isMatchAll, type Filter, type StoreQuery } from '../../domain/query/ast.js'
import { compileFilter, type Predicate } from '../../domain/query/compile-filter.js'
import { compileSort, type Comparator } from '../../domain/query/compile-sort.js'
import type { Doc } from '../../domain/query/field-getter.js'
import { project } from '../../domain/query/project.js'
import type { Data, Id, Params } from '../../domain/service/service.js'
import type { Page, Store, StoreChange } from '../../domain/store/store.js'
import { compilePattern } from '../store-commons/index.js'
import type { InMemoryKeyedWrites } from './in-memory-keyed-writes.js'

export interface InMemoryStoreOptions {
  /** Name of the id field (default 'id'). */
  id?: string
  /** Publish every change as a change stream (the service then emits from it instead of method events). */
  watch?: boolean
  /** Honour idempotency keys with these (the idempotency module gives them; in-memory-keyed-writes.ts). */
  keyedWrites?: InMemoryKeyedWrites
}

/**
 * The embedded store: a Map keyed by the id's string form (so the REST id "0" finds the numeric id 0).
 * Records are copied in and out, so callers never share references with the store.
 */
export class InMemoryStore<T extends Data = Data> implements Store<T> {
  readonly id: string
  readonly operators = ['$search', '$contains'] as const
  readonly watch?: (listener: (change: StoreChange<T>) => void) => () => void
  readonly keyedWrites?: InMemoryKeyedWrites
  private readonly records = new Map<string, Doc>()
  private readonly listeners = new Set<(change: StoreChange<T>) => void>()
  private nextId = 0

  constructor(options: InMemoryStoreOptions = {}) {
    this.id = options.id ?? 'id'
    this.keyedWrites = options.keyedWrites
    if (options.watch) {
      this.watch = (listener) => {
        this.listeners.add(listener)
        return () => this.listeners.delete(listener)
      }
    }
  }

  async find(query: StoreQuery): Promise<T[]> {
    return this.scan(query, false).data
  }

  async page(query: StoreQuery): Promise<Page<T>> {
    return this.scan(query, true)
  }

  async count(filter: Filter): Promise<number> {
    const matches = this.predicate(filter)
    let total = 0
    for (const record of this.records.values()) if (matches(record)) total++
    return total
  }

  async get(id: Id, query: StoreQuery): Promise<T | null> {
    const record = this.records.get(storageKey(id))
    if (!record || !this.predicate(query.filter)(record)) return null
    return copyOut(project(record, query.select, this.id)) as T
  }

  async create(records: Data[], query: Pick<StoreQuery, 'select'>, params?: Params): Promise<T[]> {
    if (params?.idempotency && this.keyedWrites) return this.keyedWrites.once(params, () => this.create(records, query))
    const prepared = records.map((data) => {
      const record = clone(data)
      if (record[this.id] === undefined || record[this.id] === null) record[this.id] = this.generateId()
      return record
    })
    const keys = prepared.map((record) => storageKey(record[this.id]))
    // Duplicates within the call: a set only when there are several records (one is the usual create).
    const seen = keys.length > 1 ? new Set<string>() : undefined
    for (const key of keys) {
      if (this.records.has(key) || seen?.has(key)) throw new Conflict(`A record with id '${key}' already exists`)
      seen?.add(key)
    }
    for (let index = 0; index < prepared.length; index++) this.records.set(keys[index]!, prepared[index]!)
    return prepared.map((record) => project(this.announce('created', record), query.select, this.id))
  }

  async update(id: Id, data: Data, query: StoreQuery, params?: Params): Promise<T | null> {
    if (params?.idempotency && this.keyedWrites)
      return this.keyedWrites.once(params, () => this.update(id, data, query))
    const [current] = this.matching(id, query.filter)
    if (!current) return null
    const record = { ...clone(data), [this.id]: current[this.id] }
    this.records.set(storageKey(current[this.id]), record)
    return project(this.announce('updated', record), query.select, this.id)
  }

  async patch(id: Id | null, data: Data, query: StoreQuery, params?: Params): Promise<T[]> {
    if (params?.idempotency && this.keyedWrites) return this.keyedWrites.once(params, () => this.patch(id, data, query))
    const changes = clone(data)
    delete changes[this.id]
    const records = this.matching(id, query.filter)
    return records.map((record) => {
      // One record takes the copy made above; several get a copy each, so that they share no nested object.
      Object.assign(record, records.length === 1 ? changes : clone(changes))
      return project(this.announce('patched', record), query.select, this.id)
    })
  }

  async remove(id: Id | null, query: StoreQuery, params?: Params): Promise<T[]> {
    if (params?.idempotency && this.keyedWrites) return this.keyedWrites.once(params, () => this.remove(id, query))
    return this.matching(id, query.filter).map((record) => {
      this.records.delete(storageKey(record[this.id]))
      return project(this.announce('removed', record), query.select, this.id)
    })
  }

  /** One pass over the records: counts every match and keeps only the best skip+limit when sorting. */
  private scan(query: StoreQuery, withTotal: boolean): Page<T> {
    const matches = this.predicate(query.filter)
    const end = query.limit === undefined ? Infinity : query.skip + query.limit
    const compare = query.sort.length > 0 ? compileSort(query.sort) : undefined
    let total = 0
    let kept: Doc[] = []
    if (end === 0) {
      if (withTotal) for (const record of this.records.values()) if (matches(record)) total++
    } else if (compare && end !== Infinity) {
      kept = topK(this.records.values(), matches, compare, end, (count) => (total = count))
    } else if (!compare && isMatchAll(query.filter)) {
      // The plain `find` of every list page: the total is the size, and only the page is visited.
      total = this.records.size
      for (const record of this.records.values()) {
        if (kept.length >= end) break
        kept.push(record)
      }
    } else {
      for (const record of this.records.values()) {
        if (!matches(record)) continue
        total++
        if (kept.length < end) kept.push(record)
        else if (!withTotal && !compare) break
      }
      if (compare) kept.sort(compare)
    }
    const data = kept.slice(query.skip).map((record) => copyOut(project(record, query.select, this.id)) as T)
    return { total, data }
  }

  private matching(id: Id | null, filter: Filter): Doc[] {
    const matches = this.predicate(filter)
    if (id !== null) {
      const record = this.records.get(storageKey(id))
      return record && matches(record) ? [record] : []
    }
    return [...this.records.values()].filter(matches)
  }

  /** The filter as a function; the empty filter of most gets, patches and pages compiles to nothing. */
  private predicate(filter: Filter): Predicate {
    return isMatchAll(filter) ? matchAll : compileFilter(filter, compilePattern)
  }

  private generateId(): number {
    while (this.records.has(storageKey(this.nextId))) this.nextId++
    return this.nextId++
  }

  private announce(event: StoreChange['event'], record: Doc): T {
    for (const listener of this.listeners) listener({ event, record: copyOut(record) as T })
    return copyOut(record) as T
  }
}

/** The Map key of an id: its string form, so the REST id "0" finds the numeric id 0. */
function storageKey(id: unknown): string {
  return String(id)
}

/**
 * The first `k` matches in sort order, stable for ties, in O(n log k): a sorted buffer that a new
 * record enters only when it beats the current last one.
 */
function topK(
  records: Iterable<Doc>,
  matches: Predicate,
  compare: Comparator,
  k: number,
  onTotal: (total: number) => void
): Doc[] {
  const kept: Doc[] = []
  let total = 0
  for (const record of records) {
    if (!matches(record)) continue
    total++
    if (kept.length === k) {
      if (compare(record, kept[k - 1]!) >= 0) continue
      kept.pop()
    }
    let low = 0
    let high = kept.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (compare(record, kept[mid]!) < 0) high = mid
      else low = mid + 1
    }
    kept.splice(low, 0, record)
  }
  onTotal(total)
  return kept
}

const matchAll: Predicate = () => true

/**
 * Deep copy of JSON-like data (faster than structuredClone for plain records): own enumerable string keys, so what
 * the store keeps is plain data whatever it was given.
 */
export function clone<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map(clone) as T
  if (value instanceof Date) return new Date(value.getTime()) as T
  const copy: Doc = {}
  for (const key of Object.keys(value)) {
    // A JSON "__proto__" key is data: keep it as an own property, never as the record's prototype.
    if (key === '__proto__')
      Object.defineProperty(copy, key, {
        value: clone((value as Doc)[key]),
        enumerable: true,
        writable: true,
        configurable: true
      })
    else copy[key] = clone((value as Doc)[key])
  }
  return copy as T
}

/**
 * Deep copy of a record the store holds, for a caller. Stored records are what `clone` made — plain objects with own
 * enumerable string keys, arrays, Dates — so a spread copies each level exactly as `clone` would, and V8 copies a
 * record's layout at once instead of adding its properties one by one (about a third of `clone`'s cost per record).
 */
function copyOut<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map(copyOut) as T
  if (value instanceof Date) return new Date(value.getTime()) as T
  const copy: Doc = { ...(value as Doc) }
  for (const key in copy) {
    const field = copy[key]
    // Own keys only (for…in also walks the prototype's enumerable ones); spread made a "__proto__" key an own
    // property, so assigning it sets that property.
    if (typeof field === 'object' && field !== null && Object.hasOwn(copy, key)) copy[key] = copyOut(field)
  }
  return copy as T
}
