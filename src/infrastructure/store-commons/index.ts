/*
 * store-commons (as Feathers' adapter-commons): what the stores share, so that no store imports
 * another (lint: adapters-are-independent): the RE2 engine the domain's query evaluator is given for
 * `$search`, and the event history kept in this process (the memory store's, and a database store's
 * when it has no event log). What only the database stores share, to run several instances on one
 * database, is ./event-log.
 */
export { compilePattern } from './search-pattern.js'
export { InMemoryEventHistory } from './in-memory-event-history.js'
