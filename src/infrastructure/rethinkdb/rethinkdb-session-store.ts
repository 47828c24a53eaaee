import type { RDatum } from 'rethinkdb-ts'
import type { RefreshTokenRecord, RefreshTokenUse, Revocation, SessionStore } from '../../domain/auth/session-store.js'
import type { Id } from '../../domain/service/service.js'
import { ensureTable } from './rethinkdb-tables.js'
import { TableOwner, type TableOwnerOptions } from './table-owner.js'

export interface RethinkDbSessionStoreOptions extends TableOwnerOptions {
  /** Table of refresh tokens (default `refresh_tokens`). */
  refreshTable?: string
  /** Table of the access-token deny-list (default `revocations`). */
  revocationTable?: string
}

interface RevocationRow {
  id: string
  expiresAt: number
  /** Server time (epoch ms) of the write: what `revocationsSince` pages by. */
  at: number
}

/**
 * A write stamps `at` with the server's time when it starts, but may commit after a read that
 * started later; re-reading this much of the past on every call means no entry is missed.
 */
const CURSOR_OVERLAP_MS = 2000

/**
 * Sessions in RethinkDB, shared by every instance on the database:
 *
 * - `refresh_tokens`, keyed by the token's hash, indexed by family, user and expiry. Using a token is
 *   one conditional `update` on its document, which RethinkDB applies atomically: of two instances
 *   exchanging one token at once, exactly one sees it unused.
 * - `revocations`, the access-token deny-list keyed by `sid:<family>`/`jti:<id>`, indexed by the
 *   server time of the write (`at`); instances read what was added since their last look.
 *
 * Tables are created on first use with ensureTable (safe when several instances start at once).
 */
export class RethinkDbSessionStore extends TableOwner implements SessionStore {
  readonly refreshTable: string
  readonly revocationTable: string

  constructor(options: RethinkDbSessionStoreOptions) {
    super(options)
    this.refreshTable = options.refreshTable ?? 'refresh_tokens'
    this.revocationTable = options.revocationTable ?? 'revocations'
  }

  async saveRefreshToken(record: RefreshTokenRecord): Promise<void> {
    // A record with that id is kept (the insert answers a duplicate-key error in its result, not as a failure).
    await this.run('save a refresh token', () => this.refresh().insert(record, { conflict: 'error' }).run())
  }

  async useRefreshToken(id: string, now: number): Promise<RefreshTokenUse> {
    const r = this.r()
    const result = await this.run('use a refresh token', () =>
      this.refresh()
        .get(id)
        .update(
          (row: RDatum<RefreshTokenRecord | null>) =>
            r.branch(row('usedAt').eq(null).and(row('revokedAt').eq(null)), { usedAt: now }, {}),
          { returnChanges: 'always' }
        )
        .run()
    )
    const change = result.changes?.[0] as { old_val?: RefreshTokenRecord | null } | undefined
    const record = change?.old_val
    if (!record) return { outcome: 'unknown' }
    if (result.replaced === 1) return { outcome: 'rotated', record }
    return record.revokedAt !== null ? { outcome: 'revoked', record } : { outcome: 'reused', record }
  }

  async revokeFamily(family: string, now: number): Promise<void> {
    await this.run('revoke a session', () =>
      this.refresh()
        .getAll(family, { index: 'family' })
        .filter((row) => row('revokedAt').eq(null))
        .update({ revokedAt: now })
        .run()
    )
  }

  async revokeUser(userId: Id, now: number, except?: string): Promise<string[]> {
    const result = await this.run("revoke a user's sessions", () =>
      this.refresh()
        .getAll(userId, { index: 'userId' })
        .filter((row) =>
          except === undefined ? row('revokedAt').eq(null) : row('revokedAt').eq(null).and(row('family').ne(except))
        )
        .update({ revokedAt: now }, { returnChanges: true })
        .run()
    )
    const families = new Set<string>()
    for (const change of (result.changes ?? []) as { new_val?: RefreshTokenRecord | null }[]) {
      if (change.new_val && change.new_val.expiresAt > now) families.add(change.new_val.family)
    }
    return [...families]
  }

  async addRevocations(revocations: Revocation[], now: number): Promise<void> {
    const r = this.r()
    const at = r.now().toEpochTime().mul(1000)
    await this.run('revoke access tokens', async () => {
      if (revocations.length > 0) {
        await this.revocations()
          .insert(revocations.map(({ key, expiresAt }) => ({ id: key, expiresAt, at })) as unknown as RevocationRow[], {
            conflict: 'update'
          })
          .run()
      }
      await this.revocations().between(r.minval, now, { index: 'expiresAt' }).delete().run()
    })
  }

  async revocationsSince(cursor: unknown): Promise<{ revocations: Revocation[]; cursor: unknown }> {
    const r = this.r()
    const table = this.revocations()
    const rows = typeof cursor === 'number' ? table.between(cursor, r.maxval, { index: 'at' }) : table
    const result = (await this.run('read revocations', () =>
      r
        .expr({
          now: r.now().toEpochTime().mul(1000),
          rows: rows.coerceTo('array')
        })
        .run()
    )) as unknown as { now: number; rows: RevocationRow[] }
    return {
      revocations: result.rows.map(({ id, expiresAt }) => ({ key: id, expiresAt })),
      cursor: result.now - CURSOR_OVERLAP_MS
    }
  }

  async purgeExpired(now: number): Promise<void> {
    const r = this.r()
    await this.run('purge refresh tokens', () =>
      this.refresh().between(r.minval, now, { index: 'expiresAt' }).delete().run()
    )
  }

  /** Both tables and their indexes. */
  protected async create(): Promise<void> {
    const { db } = this.options
    await ensureTable(
      this.r(),
      {
        db,
        name: this.refreshTable,
        primaryKey: 'id',
        ...this.placement(),
        indexes: [
          { name: 'family', fields: ['family'] },
          { name: 'userId', fields: ['userId'] },
          { name: 'expiresAt', fields: ['expiresAt'] }
        ]
      },
      this.logger
    )
    await ensureTable(
      this.r(),
      {
        db,
        name: this.revocationTable,
        primaryKey: 'id',
        ...this.placement(),
        indexes: [
          { name: 'at', fields: ['at'] },
          { name: 'expiresAt', fields: ['expiresAt'] }
        ]
      },
      this.logger
    )
    await this.refresh().indexWait().run()
    await this.revocations().indexWait().run()
  }

  protected creating(): string {
    return 'create the session tables'
  }

  private refresh() {
    return this.r().db(this.options.db).table<RefreshTokenRecord>(this.refreshTable)
  }

  private revocations() {
    return this.r().db(this.options.db).table<RevocationRow>(this.revocationTable)
  }
}
