import type { Metrics } from '../../domain/metrics.js'
import type { Filter, StoreQuery } from '../../domain/query/ast.js'
import type { Data, Id, Params } from '../../domain/service/service.js'
import type { Page, Store } from '../../domain/store/store.js'
import type { StoreFactory, StoreHealth, StoreOptions } from '../../domain/store/store-factory.js'

/**
 * Any store factory, with the duration of every operation of its stores reported to the metrics
 * port (`db_client_operation_duration_seconds`): the composition root wraps the factory STORE chose,
 * so every adapter is measured alike without knowing about metrics.
 */
export class MeasuredStoreFactory implements StoreFactory {
  /** `system`: the store adapter's name (the STORE setting), the `db_system_name` label. */
  constructor(
    private readonly stores: StoreFactory,
    private readonly metrics: Metrics,
    private readonly system: string
  ) {}

  create<T extends Data = Data>(name: string, options?: StoreOptions): Store<T> {
    return new MeasuredStore<T>(this.stores.create<T>(name, options), this.metrics, this.system, name)
  }

  close(): Promise<void> {
    return this.stores.close()
  }

  health(): Promise<StoreHealth> {
    return this.stores.health()
  }
}

/**
 * A store whose operations are timed (failed ones too). The change-stream members exist only when
 * the wrapped store has them: AdapterService reads their presence as "this store is live".
 */
export class MeasuredStore<T extends Data> implements Store<T> {
  readonly watch?: Store<T>['watch']
  readonly whenWatching?: Store<T>['whenWatching']
  readonly publish?: Store<T>['publish']
  readonly setup?: Store<T>['setup']
  readonly close?: Store<T>['close']
  readonly keyedWrites?: Store<T>['keyedWrites']

  constructor(
    private readonly store: Store<T>,
    private readonly metrics: Metrics,
    private readonly system: string,
    private readonly collection: string
  ) {
    if (store.watch) this.watch = store.watch.bind(store)
    if (store.whenWatching) this.whenWatching = store.whenWatching.bind(store)
    if (store.publish) this.publish = store.publish.bind(store)
    if (store.setup) this.setup = store.setup.bind(store)
    if (store.close) this.close = store.close.bind(store)
    if (store.keyedWrites) this.keyedWrites = store.keyedWrites
  }

  get id(): string {
    return this.store.id
  }

  get operators(): readonly string[] {
    return this.store.operators
  }

  find(query: StoreQuery, params?: Params): Promise<T[]> {
    return this.timed('find', performance.now(), this.store.find(query, params))
  }

  page(query: StoreQuery, params?: Params): Promise<Page<T>> {
    return this.timed('page', performance.now(), this.store.page(query, params))
  }

  count(filter: Filter, params?: Params): Promise<number> {
    return this.timed('count', performance.now(), this.store.count(filter, params))
  }

  get(id: Id, query: StoreQuery, params?: Params): Promise<T | null> {
    return this.timed('get', performance.now(), this.store.get(id, query, params))
  }

  create(records: Data[], query: Pick<StoreQuery, 'select'>, params?: Params): Promise<T[]> {
    return this.timed('create', performance.now(), this.store.create(records, query, params))
  }

  update(id: Id, data: Data, query: StoreQuery, params?: Params): Promise<T | null> {
    return this.timed('update', performance.now(), this.store.update(id, data, query, params))
  }

  patch(id: Id | null, data: Data, query: StoreQuery, params?: Params): Promise<T[]> {
    return this.timed('patch', performance.now(), this.store.patch(id, data, query, params))
  }

  remove(id: Id | null, query: StoreQuery, params?: Params): Promise<T[]> {
    return this.timed('remove', performance.now(), this.store.remove(id, query, params))
  }

  /** One `then` (not `finally`, which costs two more microtask turns) on the store's promise. */
  private timed<R>(operation: string, start: number, result: Promise<R>): Promise<R> {
    return result.then(
      (value) => {
        this.metrics.storeQuery(this.system, this.collection, operation, (performance.now() - start) / 1000)
        return value
      },
      (error: unknown) => {
        this.metrics.storeQuery(this.system, this.collection, operation, (performance.now() - start) / 1000)
        throw error
      }
    )
  }
}
