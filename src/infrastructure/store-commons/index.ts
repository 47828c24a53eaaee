/*
 * store-commons (as Feathers' adapter-commons): what the stores share, so that no store imports
 * another (lint: adapters-are-independent): the RE2 engine the domain's query evaluator is given for
 * `$search`. The event history kept in this process (connection recovery's on the memory store, and a
 * database store's when it has no event log) is ./history; what only the database stores share, to run
 * several instances on one database, is ./event-log, and what they share to honour idempotency keys
 * ./keyed-writes. Each is loaded only by what uses it.
 */
export { compilePattern } from './search-pattern.js'
