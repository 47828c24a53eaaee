import type { RefreshTokenRecord, RefreshTokenUse, Revocation, SessionStore } from '../../domain/auth/session-store.js'
import type { Id } from '../../domain/service/service.js'
import { SchemaOwner } from './schema-owner.js'

interface TokenRow {
  id: string
  family: string
  user_id: Id
  created_at: string
  expires_at: string
  used_at: string | null
  revoked_at: string | null
}

/**
 * Sessions in PostgreSQL, shared by every instance: refresh tokens (by hash) and the access-token
 * deny-list. Using a token locks its row in the statement that reads it (`FOR UPDATE`), so of
 * concurrent uses exactly one rotates it. The deny-list is read by transaction id: a cursor is the
 * oldest transaction still running when it was read (`pg_snapshot_xmin`), so an entry committed
 * late by a slower writer is never skipped (it may be answered twice, as the port allows).
 */
export class PostgresSessionStore extends SchemaOwner implements SessionStore {
  async saveRefreshToken(record: RefreshTokenRecord): Promise<void> {
    await this.run(
      'save a refresh token',
      `INSERT INTO plumage_refresh_tokens (id, family, user_id, user_key, created_at, expires_at, used_at, revoked_at)
       VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO NOTHING`,
      [
        record.id,
        record.family,
        JSON.stringify(record.userId),
        String(record.userId),
        record.createdAt,
        record.expiresAt,
        record.usedAt,
        record.revokedAt
      ]
    )
  }

  async useRefreshToken(id: string, now: number): Promise<RefreshTokenUse> {
    const { rows } = await this.run<TokenRow & { rotated: boolean }>(
      'use a refresh token',
      `WITH old AS (SELECT * FROM plumage_refresh_tokens WHERE id = $1 FOR UPDATE),
       used AS (UPDATE plumage_refresh_tokens t SET used_at = $2 FROM old
                WHERE t.id = old.id AND old.used_at IS NULL AND old.revoked_at IS NULL RETURNING t.id)
       SELECT old.*, EXISTS (SELECT 1 FROM used) AS rotated FROM old`,
      [id, now]
    )
    const row = rows[0]
    if (!row) return { outcome: 'unknown' }
    const record = tokenRecord(row)
    if (row.rotated) return { outcome: 'rotated', record }
    return { outcome: record.revokedAt !== null ? 'revoked' : 'reused', record }
  }

  async revokeFamily(family: string, now: number): Promise<void> {
    await this.run(
      'revoke a session',
      'UPDATE plumage_refresh_tokens SET revoked_at = $2 WHERE family = $1 AND revoked_at IS NULL',
      [family, now]
    )
  }

  async revokeUser(userId: Id, now: number, except?: string): Promise<string[]> {
    const { rows } = await this.run<{ family: string; expires_at: string }>(
      'revoke a user',
      `UPDATE plumage_refresh_tokens SET revoked_at = $2
       WHERE user_key = $1 AND revoked_at IS NULL AND family IS DISTINCT FROM $3
       RETURNING family, expires_at`,
      [String(userId), now, except ?? null]
    )
    return [...new Set(rows.filter((row) => Number(row.expires_at) > now).map((row) => row.family))]
  }

  async addRevocations(revocations: Revocation[], now: number): Promise<void> {
    if (revocations.length > 0)
      await this.run(
        'add revocations',
        'INSERT INTO plumage_revocations (key, expires_at) SELECT * FROM unnest($1::text[], $2::bigint[])',
        [revocations.map((entry) => entry.key), revocations.map((entry) => entry.expiresAt)]
      )
    await this.run('drop expired revocations', 'DELETE FROM plumage_revocations WHERE expires_at <= $1', [now])
  }

  async revocationsSince(cursor: unknown): Promise<{ revocations: Revocation[]; cursor: unknown }> {
    const from = typeof cursor === 'string' && /^\d+$/.test(cursor) ? cursor : null
    const { rows } = await this.run<{ horizon: string; entries: { key: string; expires_at: number }[] }>(
      'read revocations',
      `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon,
         coalesce((SELECT json_agg(json_build_object('key', key, 'expires_at', expires_at))
                   FROM plumage_revocations WHERE $1::xid8 IS NULL OR tx >= $1::xid8), '[]') AS entries`,
      [from]
    )
    return {
      revocations: rows[0]!.entries.map((entry) => ({ key: entry.key, expiresAt: Number(entry.expires_at) })),
      cursor: rows[0]!.horizon
    }
  }

  async purgeExpired(now: number): Promise<void> {
    await this.run('purge refresh tokens', 'DELETE FROM plumage_refresh_tokens WHERE expires_at <= $1', [now])
  }

  protected tables(): string[] {
    return [
      `CREATE TABLE IF NOT EXISTS plumage_refresh_tokens (
         id text PRIMARY KEY, family text NOT NULL, user_id jsonb NOT NULL, user_key text NOT NULL,
         created_at bigint NOT NULL, expires_at bigint NOT NULL, used_at bigint, revoked_at bigint)`,
      'CREATE INDEX IF NOT EXISTS plumage_refresh_tokens_family ON plumage_refresh_tokens (family)',
      'CREATE INDEX IF NOT EXISTS plumage_refresh_tokens_user ON plumage_refresh_tokens (user_key)',
      'CREATE INDEX IF NOT EXISTS plumage_refresh_tokens_expires ON plumage_refresh_tokens (expires_at)',
      `CREATE TABLE IF NOT EXISTS plumage_revocations (
         tx xid8 NOT NULL DEFAULT pg_current_xact_id(), key text NOT NULL, expires_at bigint NOT NULL)`,
      'CREATE INDEX IF NOT EXISTS plumage_revocations_tx ON plumage_revocations (tx)'
    ]
  }

  protected creating(): string {
    return 'create the session tables'
  }
}

function tokenRecord(row: TokenRow): RefreshTokenRecord {
  return {
    id: row.id,
    family: row.family,
    userId: row.user_id,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at)
  }
}
