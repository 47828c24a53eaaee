import { ConfigError, flag, integer, optionalInteger, type Env } from '../config/environment.js'
import { parseRethinkDbUrl } from './rethinkdb-connection.js'

/** The RethinkDB store's own settings, read by its module when STORE=rethinkdb. */
export interface RethinkDbSettings {
  /** `rethinkdb://host:port/db`, or `rethinkdb://h1:port,h2:port,h3:port/db` for a cluster (RETHINKDB_URL). */
  url: string
  /** The database named in the URL (`test` when the URL names none). */
  db: string
  /** How long to wait for RethinkDB at startup, and for the change feeds, in ms (RETHINKDB_TIMEOUT in seconds). */
  timeoutMs: number
  /** Replicas and shards of every table (a cluster); undefined keeps what the tables have. */
  replicas?: number
  shards?: number
  /** Publish writes made directly in the database too (RETHINKDB_DIRECT_WRITES, default true). */
  directWrites: boolean
}
export const RethinkDbSettings = Symbol.for('RethinkDbSettings')

const URL_SHAPE = /^rethinkdb:\/\/([\w.-]+(:\d{1,5})?)(,[\w.-]+(:\d{1,5})?)*(\/\w*)?$/

/** Reads RETHINKDB_URL, RETHINKDB_TIMEOUT, RETHINKDB_REPLICAS, RETHINKDB_SHARDS and RETHINKDB_DIRECT_WRITES. */
export function readRethinkDbSettings(env: Env): RethinkDbSettings {
  const url = env.RETHINKDB_URL || 'rethinkdb://127.0.0.1:28015/plumage'
  if (!URL_SHAPE.test(url)) {
    throw new ConfigError(`RETHINKDB_URL must look like rethinkdb://host:28015/db, or rethinkdb://host1:28015,host2:28015/db for a cluster (got '${url}')`)
  }
  const replicas = optionalInteger(env, 'RETHINKDB_REPLICAS', 1, 64)
  const shards = optionalInteger(env, 'RETHINKDB_SHARDS', 1, 64)
  return {
    url,
    db: parseRethinkDbUrl(url).db ?? 'test',
    timeoutMs: integer(env, 'RETHINKDB_TIMEOUT', 30, 1, 3600) * 1000,
    ...(replicas !== undefined ? { replicas } : {}),
    ...(shards !== undefined ? { shards } : {}),
    directWrites: flag(env, 'RETHINKDB_DIRECT_WRITES', true)
  }
}
