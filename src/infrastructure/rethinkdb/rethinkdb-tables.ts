import { createHash } from 'node:crypto'
import type { R, RDatum } from 'rethinkdb-ts'
import { GeneralError } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'
import { driverMessage, isAlreadyExists } from './rethinkdb-errors.js'

/** A secondary index: a name and the field (or nested path, as an array) it indexes. */
export interface IndexSpec {
  name: string
  field: string | string[]
}

export interface TableSpec {
  db: string
  name: string
  primaryKey: string
  indexes?: IndexSpec[]
  /** Copies of every shard, one per server (a cluster); applied when the table differs. */
  replicas?: number
  shards?: number
}

interface TableConfigRow {
  id: string
  db: string
  name: string
  primary_key: string
  shards: { replicas: string[] }[]
}

/**
 * Makes sure the table exists exactly once, with its primary key, indexes and replication, and waits
 * until it accepts writes. Safe when many processes start together:
 *
 * - RethinkDB lets concurrent `tableCreate` calls for one name all succeed (every later query on the
 *   name then fails as "ambiguous"). Instead, the table is created by inserting its row into the
 *   system table `rethinkdb.table_config` with an id derived from database and table name: every
 *   process computes the same id, the primary key lets exactly one insert win, and the others get
 *   "duplicate primary key", which counts as success.
 * - Duplicates left by an earlier race (or by older versions) are repaired: the table with the
 *   derived id, else the lowest id, is kept; each other one is renamed `<name>_duplicate_<id>` so
 *   it can be inspected, and dropped when it is empty. A duplicate holding records is never dropped:
 *   startup fails naming it, until someone merges or drops it.
 * - Concurrent `dbCreate` and `indexCreate` are safe on their own ("already exists" counts as
 *   success).
 */
export async function ensureTable(r: R, spec: TableSpec, logger: Logger): Promise<void> {
  await ensureDatabase(r, spec.db)
  const configs = r.db('rethinkdb').table<TableConfigRow>('table_config')
  const existing = await configs.filter({ db: spec.db, name: spec.name }).run()
  if (existing.length === 0) {
    const row = { id: tableId(spec.db, spec.name), db: spec.db, name: spec.name, primary_key: spec.primaryKey }
    try {
      await configs.insert(row as TableConfigRow).run()
        .then((result) => {
          if (result.errors > 0 && !/duplicate primary key/i.test(result.first_error ?? '')) throw new GeneralError(result.first_error ?? 'tableCreate failed')
        })
    } catch (error) {
      if (!isAlreadyExists(error)) throw error
    }
  } else if (existing.length > 1) {
    await repairDuplicates(r, spec, existing, logger)
  }
  await refuseLeftDuplicates(r, spec)
  const table = r.db(spec.db).table(spec.name)
  await table.wait({ waitFor: 'ready_for_writes' }).run()
  const config = await table.config().run() as unknown as TableConfigRow
  if (config.primary_key !== spec.primaryKey) {
    throw new GeneralError(`Table '${spec.name}' has primary key '${config.primary_key}', but the store's id field is '${spec.primaryKey}'`)
  }
  await reconfigure(r, spec, config, logger)
  await ensureIndexes(r, spec)
}

export async function ensureDatabase(r: R, db: string): Promise<void> {
  try {
    await r.dbCreate(db).run()
  } catch (error) {
    if (!isAlreadyExists(error)) throw error
  }
}

/** The id every process gives the table's config row: a UUID (v5 layout) of sha1(db, name). */
export function tableId(db: string, name: string): string {
  const hex = createHash('sha1').update(`plumage-table\u0000${db}\u0000${name}`).digest('hex').slice(0, 32).split('')
  hex[12] = '5'
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
  const h = hex.join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

async function repairDuplicates(r: R, spec: TableSpec, rows: TableConfigRow[], logger: Logger): Promise<void> {
  const preferred = tableId(spec.db, spec.name)
  const sorted = [...rows].sort((a, b) => (a.id === preferred ? -1 : b.id === preferred ? 1 : a.id.localeCompare(b.id)))
  const [kept, ...others] = sorted
  logger.warn(`RethinkDB table ${spec.db}.${spec.name} exists ${rows.length} times (tables created concurrently); keeping one and repairing the others`, {
    kept: kept!.id, duplicates: others.map((row) => row.id)
  })
  const configs = r.db('rethinkdb').table<TableConfigRow>('table_config')
  // Racing processes rename to the same name, so this converges whoever runs first.
  for (const row of others) await configs.get(row.id).update({ name: duplicateName(spec.name, row.id) }).run()
}

/** Drops empty `<name>_duplicate_<id>` tables and refuses to start while one holds records. */
async function refuseLeftDuplicates(r: R, spec: TableSpec): Promise<void> {
  const pattern = new RegExp(`^${escapeRegExp(spec.name)}_duplicate_[0-9a-f]{12}$`)
  const names = (await r.db(spec.db).tableList().run()).filter((name) => pattern.test(name))
  const holding: string[] = []
  for (const name of names) {
    const table = r.db(spec.db).table(name)
    try {
      await table.wait({ waitFor: 'ready_for_writes', timeout: 30 }).run()
      const count = await table.count().run()
      if (count === 0) await r.db('rethinkdb').table('table_config').filter({ db: spec.db, name }).delete().run()
      else holding.push(`${spec.db}.${name} (${count} records)`)
    } catch (error) {
      // Another process dropped it meanwhile.
      if (!/does not exist/i.test(driverMessage(error))) throw error
    }
  }
  if (holding.length > 0) {
    throw new GeneralError(`RethinkDB table ${spec.db}.${spec.name} had duplicates that hold records: ${holding.join(', ')}. ` +
      `Move what you need into ${spec.db}.${spec.name} and drop them, then start again.`)
  }
}

async function reconfigure(r: R, spec: TableSpec, config: TableConfigRow, logger: Logger): Promise<void> {
  const shards = spec.shards ?? config.shards.length
  const replicas = spec.replicas ?? Math.max(...config.shards.map((shard) => shard.replicas.length))
  if (config.shards.length === shards && config.shards.every((shard) => shard.replicas.length === replicas)) return
  logger.info(`RethinkDB table ${spec.db}.${spec.name}: reconfiguring`, { shards, replicas })
  const table = r.db(spec.db).table(spec.name)
  await table.reconfigure({ shards, replicas }).run()
  await table.wait({ waitFor: 'all_replicas_ready' }).run()
}

async function ensureIndexes(r: R, spec: TableSpec): Promise<void> {
  if (!spec.indexes?.length) return
  const table = r.db(spec.db).table(spec.name)
  const present = new Set(await table.indexList().run())
  for (const index of spec.indexes) {
    if (present.has(index.name)) continue
    const path = [index.field].flat()
    try {
      await table.indexCreate(index.name, (row: RDatum<any>) => path.reduce((value, key) => value(key), row)).run()
    } catch (error) {
      if (!isAlreadyExists(error)) throw error
    }
  }
  await table.indexWait(...spec.indexes.map((index) => index.name)).run()
}

function duplicateName(name: string, id: string): string {
  return `${name}_duplicate_${id.replace(/-/g, '').slice(0, 12)}`
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
