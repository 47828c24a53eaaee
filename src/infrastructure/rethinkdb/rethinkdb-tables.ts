import type { R, RDatum } from 'rethinkdb-ts'
import { GeneralError, type FeathersError } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'
import { driverMessage, isAlreadyExists } from './rethinkdb-errors.js'
import { rethinkdbDriver } from './rethinkdb-driver.js'

/**
 * A secondary index: its name and the fields it indexes, in order. One field makes a simple index,
 * several a compound one (its value is the array of theirs); a dotted name reaches into nested
 * objects. A row whose indexed field is missing, null or an object is not in the index.
 */
export interface IndexSpec {
  name: string
  fields: readonly string[]
  /** An index over an array field, one entry per element (`multi`). */
  multi?: boolean
}

/** The value an index keeps for a row (also the key the query planner compares rows by). */
export function indexValue(row: RDatum, fields: readonly string[]): RDatum {
  const read = (field: string) => field.split('.').reduce((value, key) => value(key), row)
  return fields.length === 1 ? read(fields[0]!) : (fields.map(read) as unknown as RDatum)
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
 * - RethinkDB lets concurrent `tableCreate` calls for one name all succeed, leaving several tables of
 *   that name (every query on the name then fails as "ambiguous"), and it offers nothing to create a
 *   table atomically (`table_config` inserts must let the server pick the id). So every process
 *   creates the table when it does not see it, then repairs: all tables of the name but the lowest id
 *   are renamed `<name>_duplicate_<id>`, which makes the name unambiguous again; empty duplicates are
 *   dropped. Every process computes the same outcome from the same rows, and every step (rename by id,
 *   delete by id) is idempotent, so racing processes converge.
 * - When the kept table is empty and exactly one duplicate holds records, that one takes the name.
 *   A duplicate holding records is never dropped: while more than one table of the name holds
 *   records, startup fails naming them, until someone merges or drops them.
 * - Concurrent `dbCreate` and `indexCreate` are safe ("already exists" counts as success).
 */
export async function ensureTable(r: R, spec: TableSpec, logger: Logger, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (let attempt = 0; ; attempt++) {
    try {
      return await ensureTableOnce(r, spec, logger)
    } catch (caught) {
      const error = missingPermission(caught, spec) ?? caught
      // Another process is creating, renaming or dropping the same table, or a replica is moving:
      // try again shortly. Refusals (records in duplicates, a wrong primary key) are final.
      if (!TRANSIENT.test(driverMessage(error)) || error instanceof GeneralError || Date.now() > deadline) throw error
      logger.debug(`RethinkDB table ${spec.db}.${spec.name} not ready yet; trying again`, {
        error: driverMessage(error),
        attempt
      })
      await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 1_000)))
    }
  }
}

const TRANSIENT =
  /not available|ambiguous|does not exist|lost contact|connection was closed|none of the pools|being (created|deleted|dropped)|index `[^`]*` was not found/i

async function ensureTableOnce(r: R, spec: TableSpec, logger: Logger): Promise<void> {
  await ensureDatabase(r, spec.db)
  const names = await r.db(spec.db).tableList().run()
  if (!names.includes(spec.name)) {
    try {
      await r.db(spec.db).tableCreate(spec.name, { primaryKey: spec.primaryKey }).run()
    } catch (error) {
      // "already exists", or "ambiguous" while another process's create lands: the repair sorts it out.
      if (!isAlreadyExists(error) && !/ambiguous/i.test(driverMessage(error))) throw error
    }
  }
  const table = r.db(spec.db).table(spec.name)
  // The repair reads and writes the system tables, which only the admin user may: a user granted
  // only on its database gets there only when the name really is ambiguous or duplicates are left.
  const ambiguous = await table
    .wait({ waitFor: 'ready_for_writes' })
    .run()
    .then(
      () => false,
      (error: unknown) => {
        if (/ambiguous/i.test(driverMessage(error))) return true
        throw error
      }
    )
  if (ambiguous || names.some((name) => duplicatePattern(spec.name).test(name))) {
    await repairDuplicates(r, spec, logger).catch((error: unknown) => {
      const refused = refusedPermission(error)
      if (!refused) throw error
      throw new GeneralError(
        `RethinkDB table ${spec.db}.${spec.name} was created more than once (instances started at the same moment), and user ` +
          `'${refused.user}' may not repair it: that takes the admin user (it renames tables in rethinkdb.table_config). Start one instance as admin once.`
      )
    })
    await table.wait({ waitFor: 'ready_for_writes' }).run()
  }
  const config = (await table.config().run()) as unknown as TableConfigRow
  if (config.primary_key !== spec.primaryKey) {
    throw new GeneralError(
      `Table '${spec.name}' has primary key '${config.primary_key}', but the store's id field is '${spec.primaryKey}'`
    )
  }
  await reconfigure(r, spec, config, logger)
  await ensureIndexes(r, spec)
  if (names.includes(spec.name)) return
  // This process created the table, and another one may have too: on a cluster a table created
  // concurrently can become visible only now and take the name, and the indexes just made would
  // then sit on the table that lost it. Start over on the one that holds it. (The name's config,
  // not the system tables, which a user granted only on its database may not read; a name held
  // twice answers "ambiguous", which is retried with the repair.)
  const holder = (await table.config().run()) as unknown as TableConfigRow
  if (holder.id !== config.id) {
    throw new Error(
      `RethinkDB table ${spec.db}.${spec.name} is being created by another process too; indexing the one that keeps the name`
    )
  }
}

/**
 * Creates the database when it is missing. `dbCreate` asks for the global `config` permission even
 * when the database exists, so a user granted only on its database looks first (`dbList` needs no
 * permission).
 */
export async function ensureDatabase(r: R, db: string): Promise<void> {
  if ((await r.dbList().run()).includes(db)) return
  try {
    await r.dbCreate(db).run()
  } catch (error) {
    const refused = refusedPermission(error)
    if (refused) {
      throw new GeneralError(
        `RethinkDB user '${refused.user}' may not create database '${db}' (that needs the \`config\` permission on the server): ` +
          `create it as admin with r.dbCreate('${db}'), then ${grant(db, refused.user)}`
      )
    }
    if (!isAlreadyExists(error)) throw error
  }
}

async function repairDuplicates(r: R, spec: TableSpec, logger: Logger): Promise<void> {
  const configs = r.db('rethinkdb').table<TableConfigRow>('table_config')
  const rows = (await configs.filter({ db: spec.db, name: spec.name }).run()).sort((a, b) => a.id.localeCompare(b.id))
  if (rows.length > 1) {
    logger.warn(
      `RethinkDB table ${spec.db}.${spec.name} exists ${rows.length} times (created concurrently); keeping one and repairing the others`,
      {
        kept: rows[0]!.id,
        duplicates: rows.slice(1).map((row) => row.id)
      }
    )
    // Racing processes rename to the same names, so this converges whoever runs first.
    for (const row of rows.slice(1))
      await configs
        .get(row.id)
        .update({ name: duplicateName(spec.name, row.id) })
        .run()
  }
  const pattern = duplicatePattern(spec.name)
  const duplicates = (await r.db(spec.db).tableList().run()).filter((name) => pattern.test(name))
  if (duplicates.length === 0) return
  const counts = new Map<string, number>()
  for (const name of [spec.name, ...duplicates]) {
    const count = await countRecords(r, spec.db, name)
    if (count !== undefined) counts.set(name, count)
  }
  const holding = [...counts].filter(([, count]) => count > 0).map(([name]) => name)
  if (holding.length === 1 && holding[0] !== spec.name && counts.get(spec.name) === 0) {
    // The records are in a duplicate and the kept table is empty: the duplicate takes the name.
    logger.warn(`RethinkDB table ${spec.db}.${spec.name}: keeping ${holding[0]}, the one that holds records`)
    await configs.filter({ db: spec.db, name: spec.name }).delete().run()
    await configs.filter({ db: spec.db, name: holding[0]! }).update({ name: spec.name }).run()
  }
  for (const name of duplicates) if (counts.get(name) === 0) await configs.filter({ db: spec.db, name }).delete().run()
  if (holding.length > 1) {
    throw new GeneralError(
      `RethinkDB table ${spec.db}.${spec.name} has duplicates that hold records: ` +
        `${holding
          .filter((name) => name !== spec.name)
          .map((name) => `${spec.db}.${name} (${counts.get(name)} record${counts.get(name) === 1 ? '' : 's'})`)
          .join(', ')}. ` +
        `Move what you need into ${spec.db}.${spec.name} and drop them, then start again.`
    )
  }
}

/** Records in a table, once it is ready; undefined when another process dropped it meanwhile. */
async function countRecords(r: R, db: string, name: string): Promise<number | undefined> {
  try {
    const table = r.db(db).table(name)
    await table.wait({ waitFor: 'ready_for_writes', timeout: 30 }).run()
    return await table.count().run()
  } catch (error) {
    if (/does not exist/i.test(driverMessage(error))) return undefined
    throw error
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
    try {
      await table
        .indexCreate(index.name, (row: RDatum) => indexValue(row, index.fields), index.multi ? { multi: true } : {})
        .run()
    } catch (error) {
      if (!isAlreadyExists(error)) throw error
    }
  }
  await table.indexWait(...spec.indexes.map((index) => index.name)).run()
}

function duplicatePattern(name: string): RegExp {
  return new RegExp(`^${escapeRegExp(name)}_duplicate_[0-9a-f]{12}$`)
}

function duplicateName(name: string, id: string): string {
  return `${name}_duplicate_${id.replace(/-/g, '').slice(0, 12)}`
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * The user and the permission of "User `app` does not have the required `config` permission."; undefined for other
 * errors.
 */
function refusedPermission(error: unknown): { user: string; permission: string } | undefined {
  const { isRethinkDBError, RethinkDBErrorType } = rethinkdbDriver()
  if (!isRethinkDBError(error) || error.type !== RethinkDBErrorType.PERMISSION_ERROR) return undefined
  const [, user = 'admin', permission = 'config'] =
    /User `([^`]*)` does not have the required `(\w+)` permission/.exec(driverMessage(error)) ?? []
  return { user, permission }
}

function grant(db: string, user: string): string {
  return `r.db('${db}').grant('${user}', {read: true, write: true, config: true})`
}

/**
 * A permission the server refused while creating or checking the tables of `spec.db`, as one line
 * that names the user, the permission, what needs it and the grant that fixes it.
 */
function missingPermission(error: unknown, spec: TableSpec): FeathersError | undefined {
  const refused = refusedPermission(error)
  if (!refused) return undefined
  return new GeneralError(
    `RethinkDB user '${refused.user}' lacks the \`${refused.permission}\` permission on database '${spec.db}' ` +
      `(needed to create and check its tables at startup; grant it with ${grant(spec.db, refused.user)})`
  )
}
