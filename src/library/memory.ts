/**
 * `plumage/memory`: the embedded store, one collection per InMemoryStore (data lives as long as the process).
 *
 * @module plumage/memory
 */
export { InMemoryStore, type InMemoryStoreOptions } from '../infrastructure/memory/in-memory-store.js'
export { InMemoryStoreFactory } from '../infrastructure/memory/in-memory-store-factory.js'
