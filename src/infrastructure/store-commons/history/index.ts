/** The event history kept in this process: connection recovery's on the memory store, a database store's fallback. */
export { InMemoryEventHistory } from './in-memory-event-history.js'
