import type { RefreshTokenRecord, RefreshTokenUse, Revocation, SessionStore } from '../../domain/auth/session-store.js'
import type { Id } from '../../domain/service/service.js'

/**
 * Sessions in this process's memory. Every check-and-set is one synchronous step, so concurrent
 * uses of one refresh token cannot both win. Share one instance between apps of one process; with
 * several processes use a store they all reach (RethinkDbSessionStore).
 */
export class InMemorySessionStore implements SessionStore {
  private readonly tokens = new Map<string, RefreshTokenRecord>()
  /** The deny-list in the order entries were added; a cursor is a position in it. */
  private log: Revocation[] = []
  private dropped = 0

  async saveRefreshToken(record: RefreshTokenRecord): Promise<void> {
    this.tokens.set(record.id, { ...record })
  }

  async useRefreshToken(id: string, now: number): Promise<RefreshTokenUse> {
    const record = this.tokens.get(id)
    if (!record) return { outcome: 'unknown' }
    if (record.revokedAt !== null) return { outcome: 'revoked', record: { ...record } }
    if (record.usedAt !== null) return { outcome: 'reused', record: { ...record } }
    const before = { ...record }
    record.usedAt = now
    return { outcome: 'rotated', record: before }
  }

  async revokeFamily(family: string, now: number): Promise<void> {
    for (const record of this.tokens.values()) if (record.family === family && record.revokedAt === null) record.revokedAt = now
  }

  async revokeUser(userId: Id, now: number): Promise<string[]> {
    const families = new Set<string>()
    for (const record of this.tokens.values()) {
      if (String(record.userId) !== String(userId) || record.revokedAt !== null) continue
      if (record.expiresAt > now) families.add(record.family)
      record.revokedAt = now
    }
    return [...families]
  }

  async addRevocations(revocations: Revocation[], now: number): Promise<void> {
    const expired = this.log.findIndex((entry) => entry.expiresAt > now)
    const drop = expired < 0 ? this.log.length : expired
    // Only a prefix is dropped, so cursors (positions) stay meaningful.
    if (drop > 0 && this.log.slice(0, drop).every((entry) => entry.expiresAt <= now)) {
      this.log = this.log.slice(drop)
      this.dropped += drop
    }
    this.log.push(...revocations.map((entry) => ({ ...entry })))
  }

  async revocationsSince(cursor: unknown): Promise<{ revocations: Revocation[]; cursor: unknown }> {
    const from = typeof cursor === 'number' ? Math.max(0, cursor - this.dropped) : 0
    return { revocations: this.log.slice(from).map((entry) => ({ ...entry })), cursor: this.dropped + this.log.length }
  }

  async purgeExpired(now: number): Promise<void> {
    for (const [id, record] of this.tokens) if (record.expiresAt <= now) this.tokens.delete(id)
  }
}
