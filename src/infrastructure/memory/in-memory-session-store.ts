import { injectable } from 'inversify'
import type { RefreshTokenRecord, RefreshTokenUse, Revocation, SessionStore } from '../../domain/auth/session-store.js'
import type { Id } from '../../domain/service/service.js'

/**
 * Sessions in this process's memory. Every check-and-set is one synchronous step, so concurrent
 * uses of one refresh token cannot both win. Share one instance between apps of one process; with
 * several processes use a store they all reach (RethinkDbSessionStore).
 */
@injectable()
export class InMemorySessionStore implements SessionStore {
  private readonly tokens = new Map<string, RefreshTokenRecord>()
  /** The deny-list; each entry numbered in the order it was added (a cursor is the last number seen). */
  private revocations: (Revocation & { seq: number })[] = []
  private seq = 0

  async saveRefreshToken(record: RefreshTokenRecord): Promise<void> {
    if (!this.tokens.has(record.id)) this.tokens.set(record.id, { ...record })
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
    for (const record of this.tokens.values())
      if (record.family === family && record.revokedAt === null) record.revokedAt = now
  }

  async revokeUser(userId: Id, now: number, except?: string): Promise<string[]> {
    const families = new Set<string>()
    for (const record of this.tokens.values()) {
      if (String(record.userId) !== String(userId) || record.revokedAt !== null || record.family === except) continue
      if (record.expiresAt > now) families.add(record.family)
      record.revokedAt = now
    }
    return [...families]
  }

  async addRevocations(revocations: Revocation[], now: number): Promise<void> {
    this.revocations = this.revocations.filter((entry) => entry.expiresAt > now)
    for (const { key, expiresAt } of revocations) this.revocations.push({ key, expiresAt, seq: ++this.seq })
  }

  async revocationsSince(cursor: unknown): Promise<{ revocations: Revocation[]; cursor: unknown }> {
    const from = typeof cursor === 'number' ? cursor : 0
    return {
      revocations: this.revocations
        .filter((entry) => entry.seq > from)
        .map(({ key, expiresAt }) => ({ key, expiresAt })),
      cursor: this.seq
    }
  }

  async purgeExpired(now: number): Promise<void> {
    for (const [id, record] of this.tokens) if (record.expiresAt <= now) this.tokens.delete(id)
  }
}
