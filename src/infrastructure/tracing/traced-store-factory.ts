import type { Data } from '../../domain/service/service.js'
import type { Store } from '../../domain/store/store.js'
import type { StoreFactory } from '../../domain/store/store-factory.js'
import type { Tracer } from '../../domain/tracing.js'

/** The Store methods that query the database: each call is one client span. */
const QUERIES = new Set(['find', 'page', 'count', 'get', 'create', 'update', 'patch', 'remove', 'publish'])

/**
 * Every store the factory creates, with a span per query: `<operation> <collection>`, with
 * `db.system.name` (and the older `db.system`) set to the store's name (`memory`, `rethinkdb`),
 * `db.operation.name` and `db.collection.name` — never the query's values. Stores keep every other
 * member (watch, createQuery…) as they are; the composition root decorates only when tracing is on.
 */
export function tracedStoreFactory(factory: StoreFactory, tracer: Tracer, system: string): StoreFactory {
  return new Proxy(factory, {
    get(target, key, receiver) {
      if (key !== 'create') return Reflect.get(target, key, receiver) as unknown
      return <T extends Data>(...args: Parameters<StoreFactory['create']>) =>
        tracedStore(target.create<T>(...args), tracer, system, args[0])
    }
  })
}

function tracedStore<T extends Data>(store: Store<T>, tracer: Tracer, system: string, collection: string): Store<T> {
  const wrapped = new Map<string, unknown>()
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown
      if (typeof key !== 'string' || !QUERIES.has(key) || typeof value !== 'function') return value
      let traced = wrapped.get(key)
      if (!traced) {
        const attributes = {
          'db.system.name': system,
          'db.system': system,
          'db.operation.name': key,
          'db.collection.name': collection
        }
        // Called on the store itself: a query that calls another method of its store is one span.
        traced = (...args: unknown[]) =>
          tracer.run(`${key} ${collection}`, { kind: 'client', attributes }, () => value.apply(target, args) as unknown)
        wrapped.set(key, traced)
      }
      return traced
    }
  })
}
