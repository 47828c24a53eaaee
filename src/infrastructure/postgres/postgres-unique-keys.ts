import { createHash } from 'node:crypto'
import type { Id } from '../../domain/service/service.js'
import type { UniqueKeys } from '../../domain/unique-keys.js'
import { SchemaOwner } from './schema-owner.js'

/**
 * Unique keys in PostgreSQL, shared by every instance: one row per claimed key, keyed by a hash of
 * scope and key (a value of any length fits the primary key). A claim is one
 * `INSERT … ON CONFLICT DO NOTHING`: of concurrent claims of one key, on any instances, exactly one inserts.
 */
export class PostgresUniqueKeys extends SchemaOwner implements UniqueKeys {
  async claim(scope: string, key: string, holder?: Id): Promise<boolean> {
    const { rowCount } = await this.run(
      'claim a unique key',
      'INSERT INTO plumage_unique_keys (id, holder) VALUES ($1, $2::jsonb) ON CONFLICT DO NOTHING',
      [keyId(scope, key), holder === undefined ? null : JSON.stringify(holder)]
    )
    return rowCount === 1
  }

  async release(scope: string, key: string): Promise<void> {
    await this.run('release a unique key', 'DELETE FROM plumage_unique_keys WHERE id = $1', [keyId(scope, key)])
  }

  async assign(scope: string, key: string, holder: Id): Promise<void> {
    await this.run('assign a unique key', 'UPDATE plumage_unique_keys SET holder = $2::jsonb WHERE id = $1', [
      keyId(scope, key),
      JSON.stringify(holder)
    ])
  }

  async holder(scope: string, key: string): Promise<Id | undefined> {
    const { rows } = await this.run<{ holder: Id | null }>(
      'read a unique key',
      'SELECT holder FROM plumage_unique_keys WHERE id = $1',
      [keyId(scope, key)]
    )
    return rows[0]?.holder ?? undefined
  }

  protected tables(): string[] {
    return ['CREATE TABLE IF NOT EXISTS plumage_unique_keys (id text PRIMARY KEY, holder jsonb)']
  }

  protected creating(): string {
    return 'create the unique keys table'
  }
}

/** SHA-256 of the scope and the key, base64url: the same on every instance. */
export function keyId(scope: string, key: string): string {
  return createHash('sha256').update(scope).update('\0').update(key).digest('base64url')
}
