import type { Filter, StoreQuery } from '../query/ast.js'
import type { Data, Id, Params } from '../service/service.js'
import type { KeyedWrites } from './keyed-write.js'

/** A change published by a store with a live change stream (e.g. RethinkDB's event log). */
export interface StoreChange<T extends Data = Data> {
  /** created, updated, patched, removed — or a custom event sent with `publish`. */
  event: string
  record: T
  /**
   * The W3C `traceparent` of the write that caused the change, when tracing is on and the store
   * carried it (RethinkDB's event log does): the span publishing the event links to it.
   */
  trace?: string
}

export interface Page<T> {
  total: number
  data: T[]
}

/**
 * The persistence port, generic in the record type: adapters implement it for any `T`
 * (`class MyStore<T extends Data> implements Store<T>`). Every method takes the typed query AST and
 * every method that returns records projects them by `query.select` (the id always stays): callers
 * never project. `params` carries adapter-specific members set by hooks (e.g. `params.rethinkdb`),
 * which only the matching adapter reads. Records returned never share references with the store.
 */
export interface Store<T extends Data = Data> {
  /** Name of the id field (the primary key). */
  readonly id: string
  /** Extra query operators this adapter understands beyond the common ones (e.g. '$search'). */
  readonly operators: readonly string[]

  find(query: StoreQuery, params?: Params): Promise<T[]>
  /** `total` counts every match before skip/limit; `data` is the requested page. */
  page(query: StoreQuery, params?: Params): Promise<Page<T>>
  count(filter: Filter, params?: Params): Promise<number>
  /** The record with this id that also matches `query.filter`, projected by `query.select`; null otherwise. */
  get(id: Id, query: StoreQuery, params?: Params): Promise<T | null>
  /**
   * Inserts every record in one operation; ids are generated where missing. Returns the created
   * records in input order, projected by `query.select` (a create has no filter, sort or page).
   */
  create(records: Data[], query: Pick<StoreQuery, 'select'>, params?: Params): Promise<T[]>
  /** Replaces the matching record (the id is kept); null when none matches. */
  update(id: Id, data: Data, query: StoreQuery, params?: Params): Promise<T | null>
  /** Merges `data` into the record with `id` (or every match when id is null). */
  patch(id: Id | null, data: Data, query: StoreQuery, params?: Params): Promise<T[]>
  /** Removes the record with `id` (or every match when id is null) and returns what was removed. */
  remove(id: Id | null, query: StoreQuery, params?: Params): Promise<T[]>

  /**
   * Present when the store publishes every change itself (including changes made by other
   * processes). The service then emits these instead of its own method events — never both.
   */
  watch?(listener: (change: StoreChange<T>) => void): () => void
  /** With `watch`: resolves once every change made from now on will reach the listeners. */
  whenWatching?(): Promise<void>
  /**
   * With `watch`: sends a custom event through the store's change stream, so that every process
   * watching it publishes the event once (the App routes `service.emit` of a live service here).
   */
  publish?(event: string, data: unknown): Promise<void>
  /**
   * Present when the store honours idempotency keys (an opt-in capability, proven by the kit's idempotency
   * contract): its writes read `params.idempotency` (a KeyedWrite) and write the key and the answer atomically with
   * the record and its event. Absent: the key is not honoured by this store.
   */
  readonly keyedWrites?: KeyedWrites
  setup?(): Promise<void>
  close?(): Promise<void>
}

export const Store = Symbol.for('Store')
