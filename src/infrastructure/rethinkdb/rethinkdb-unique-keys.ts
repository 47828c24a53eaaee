import { createHash } from 'node:crypto'
import { GeneralError } from '../../domain/errors/errors.js'
import type { Id } from '../../domain/service/service.js'
import type { UniqueKeys } from '../../domain/unique-keys.js'
import { toStoreError } from './rethinkdb-errors.js'
import { ensureTable } from './rethinkdb-tables.js'
import { TableOwner, type TableOwnerOptions } from './table-owner.js'

export interface RethinkDbUniqueKeysOptions extends TableOwnerOptions {
  /** The table holding the claims (default `unique_keys`). */
  table?: string
}

interface KeyRow {
  id: string
  scope: string
  key: string
  /** The id of the record holding the key; absent on rows claimed before holders were recorded. */
  holder?: Id
}

/**
 * Unique keys in RethinkDB: one table keyed by the claim itself (a hash of scope and normalised
 * value), so a claim is one insert and the primary key makes it atomic across every process and
 * connection — of any number of simultaneous inserts of one key exactly one succeeds, the others get
 * "duplicate primary key". A secondary index could not do this: RethinkDB does not enforce
 * uniqueness on secondary indexes. The key is hashed because primary keys are limited to 127
 * characters (an email alone may have 254); scope and value are kept in the row for people. The
 * row also names its holder's id: finding a user by email is then two reads by primary key.
 *
 * The table is created on first use (a claim waits for it).
 */
export class RethinkDbUniqueKeys extends TableOwner implements UniqueKeys {
  readonly tableName: string

  constructor(options: RethinkDbUniqueKeysOptions) {
    super(options)
    this.tableName = options.table ?? 'unique_keys'
  }

  async claim(scope: string, key: string, holder?: Id): Promise<boolean> {
    await this.setup()
    try {
      const row: KeyRow = { id: keyId(scope, key), scope, key, ...(holder === undefined ? {} : { holder }) }
      const result = await this.table().insert(row, { conflict: 'error' }).run()
      if (result.inserted === 1) return true
      if (result.errors > 0 && /duplicate primary key/i.test(result.first_error ?? '')) return false
      throw new GeneralError(`Claiming a unique key failed: ${result.first_error ?? 'nothing was inserted'}`)
    } catch (error) {
      throw toStoreError(error, this.logger, `claim ${scope}`)
    }
  }

  async release(scope: string, key: string): Promise<void> {
    await this.setup()
    try {
      await this.table().get(keyId(scope, key)).delete().run()
    } catch (error) {
      throw toStoreError(error, this.logger, `release ${scope}`)
    }
  }

  async assign(scope: string, key: string, holder: Id): Promise<void> {
    await this.setup()
    try {
      await this.table().get(keyId(scope, key)).update({ holder }).run()
    } catch (error) {
      throw toStoreError(error, this.logger, `assign ${scope}`)
    }
  }

  async holder(scope: string, key: string): Promise<Id | undefined> {
    await this.setup()
    try {
      const row = await this.table().get(keyId(scope, key)).run()
      return row?.holder ?? undefined
    } catch (error) {
      throw toStoreError(error, this.logger, `look up ${scope}`)
    }
  }

  /** The claims' table (safe when several processes claim their first key at the same moment). */
  protected async create(): Promise<void> {
    await ensureTable(
      this.r(),
      { db: this.options.db, name: this.tableName, primaryKey: 'id', ...this.placement() },
      this.logger
    )
  }

  protected creating(): string {
    return `create table ${this.tableName}`
  }

  private table() {
    return this.r().db(this.options.db).table<KeyRow>(this.tableName)
  }
}

/** 64 hex characters, whatever the value's length (primary keys are limited to 127). */
export function keyId(scope: string, key: string): string {
  return createHash('sha256').update(scope).update('\u0000').update(key).digest('hex')
}
