/*
 * What the database stores (RethinkDB, PostgreSQL) share to run several instances on one database: the
 * event history over an ordered event log, the log's listeners per table and the callers waiting
 * for a place in it, the heartbeat and sealed
 * logins of connection sessions every instance reads, and group commit for their writes. The stores import
 * it here, never from each other (lint: adapters-are-independent); with both database stores deleted,
 * this folder goes too.
 */
export { GroupCommit, type GroupCommitOptions } from './group-commit.js'
export { Heartbeat } from './heartbeat.js'
export {
  base36BigInt,
  base36Number,
  OrderedLogHistory,
  type LogOrder,
  type LogPosition,
  type OrderedLogHistoryOptions
} from './ordered-log-history.js'
export { PositionWaiters } from './position-waiters.js'
export { SealedLogins } from './sealed-logins.js'
export { TableSubscribers } from './table-subscribers.js'
