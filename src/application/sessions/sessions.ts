import { inject, injectable } from 'inversify'
import { SecretTokens } from '../../domain/auth/secret-tokens.js'
import { SessionStore, type Revocation } from '../../domain/auth/session-store.js'
import type { TokenPayload } from '../../domain/auth/token-service.js'
import { Clock } from '../../domain/clock.js'
import { NotAuthenticated } from '../../domain/errors/errors.js'
import type { Id } from '../../domain/service/service.js'
import type { AuthenticationSessions } from '../authentication/session-ports.js'

/** The lifetimes and sync interval of sessions; every one has a default. */
export interface SessionsSettings {
  /** Lifetime of a refresh token in ms (default 30 days); each rotation issues a new one with a full lifetime. */
  refreshTokenTtl?: number
  /**
   * Lifetime of access tokens in ms (default 15 minutes): a revoked session stays on the deny-list
   * this long, by when every access token it issued has expired.
   */
  accessTokenTtl?: number
  /**
   * How long (ms) after a refresh token's use it may be presented again and answer the same successor (default
   * 30 s; 0: never): a refresh whose answer a dropped connection lost is retried. Later, a reuse revokes the session.
   */
  reuseWindow?: number
  /**
   * How often (ms, by the Clock) this process reads revocations other processes made (default 500).
   * A revocation is seen everywhere within this plus one store round trip.
   */
  syncInterval?: number
}
export const SessionsSettings = Symbol.for('SessionsSettings')

const DEFAULT_REFRESH_TOKEN_TTL = 30 * 24 * 3600 * 1000
const DEFAULT_ACCESS_TOKEN_TTL = 15 * 60 * 1000
const DEFAULT_REUSE_WINDOW = 30_000
/** Expired refresh tokens are deleted at most this often. */
const PURGE_INTERVAL = 3600 * 1000

/**
 * Server-side sessions: a login starts a family (its id is the access tokens' `sid` claim) with a
 * refresh token; using a refresh token kills it and issues the next one of the family; using a dead
 * one again means it was stolen (or replayed), so the whole family is revoked — unless it comes within
 * `reuseWindow` of its use: a client whose refresh answer was lost retries, and gets the same next token
 * (SecretTokens.successor), so the family never forks. A thief must then beat that window, and whoever
 * uses the shared next token second after it reveals the theft.
 *
 * Access tokens stay JWTs verified without a store read: revocations (`sid:` for a session, `jti:`
 * for one token) are kept in a local set that is brought up to date from the shared store at most
 * every `syncInterval`, so checking a token costs two map lookups and, twice a second, one query.
 */
@injectable()
export class Sessions implements AuthenticationSessions {
  readonly refreshTokenTtl: number
  readonly accessTokenTtl: number
  readonly reuseWindow: number
  private readonly syncInterval: number
  private readonly revoked = new Map<string, number>()
  private cursor: unknown
  private syncedAt = -Infinity
  private syncing?: Promise<void>
  private revisions = 0
  private purgedAt = -Infinity

  constructor(
    @inject(SessionStore) readonly store: SessionStore,
    @inject(SecretTokens) private readonly secrets: SecretTokens,
    @inject(Clock) private readonly clock: Clock,
    @inject(SessionsSettings) settings: SessionsSettings = {}
  ) {
    this.refreshTokenTtl = settings.refreshTokenTtl ?? DEFAULT_REFRESH_TOKEN_TTL
    this.accessTokenTtl = settings.accessTokenTtl ?? DEFAULT_ACCESS_TOKEN_TTL
    this.syncInterval = settings.syncInterval ?? 500
    this.reuseWindow = settings.reuseWindow ?? DEFAULT_REUSE_WINDOW
  }

  /** A new session id (family). */
  newFamily(): string {
    return this.secrets.id()
  }

  /** Issues a new family's first refresh token and stores it by its hash. */
  issueRefreshToken(family: string, userId: Id): Promise<string> {
    return this.save(this.secrets.generate(), family, userId)
  }

  /** Stores a refresh token of the family by its hash (kept as it is when it was stored already). */
  private async save(token: string, family: string, userId: Id): Promise<string> {
    const { secrets, store, clock } = this
    const now = clock.now()
    await store.saveRefreshToken({
      id: secrets.hash(token),
      family,
      userId,
      createdAt: now,
      expiresAt: now + this.refreshTokenTtl,
      usedAt: null,
      revokedAt: null
    })
    if (now - this.purgedAt > PURGE_INTERVAL) {
      this.purgedAt = now
      await store.purgeExpired(now)
    }
    return token
  }

  /**
   * Exchanges a refresh token: answers its family, user and the family's next refresh token when it was live (it is
   * dead now), or used within the reuse window (the same next token). A token used before that revokes its family.
   */
  async rotate(refreshToken: string): Promise<{ family: string; userId: Id; refreshToken: string }> {
    const { secrets, store, clock } = this
    const now = clock.now()
    const use = await store.useRefreshToken(secrets.hash(refreshToken), now)
    if (use.outcome === 'unknown') throw new NotAuthenticated('Invalid refresh token')
    const { record } = use
    const retried = use.outcome === 'reused' && record.usedAt !== null && now - record.usedAt < this.reuseWindow
    if (use.outcome === 'reused' && !retried) {
      await this.revokeFamily(record.family)
      throw new NotAuthenticated('Refresh token already used: the session has been revoked', {
        name: 'RefreshTokenReused'
      })
    }
    if (use.outcome === 'revoked') throw new NotAuthenticated('Refresh token revoked', { name: 'RefreshTokenRevoked' })
    if (record.expiresAt <= now) throw new NotAuthenticated('Refresh token expired', { name: 'RefreshTokenExpired' })
    const next = await this.save(secrets.successor(refreshToken), record.family, record.userId)
    return { family: record.family, userId: record.userId, refreshToken: next }
  }

  /** Logout: the session's refresh tokens die and its access tokens (and this one by `jti`) are denied. */
  async logout(payload: TokenPayload): Promise<void> {
    const now = this.clock.now()
    const entries: Revocation[] = []
    if (typeof payload.jti === 'string')
      entries.push({ key: `jti:${payload.jti}`, expiresAt: expiry(payload, now + this.accessTokenTtl) })
    if (typeof payload.sid === 'string') {
      await this.store.revokeFamily(payload.sid, now)
      entries.push({ key: `sid:${payload.sid}`, expiresAt: now + this.accessTokenTtl })
    }
    await this.deny(entries, now)
  }

  /** Revokes one session (refresh tokens and access tokens). */
  async revokeFamily(family: string): Promise<void> {
    const now = this.clock.now()
    await this.store.revokeFamily(family, now)
    await this.deny([{ key: `sid:${family}`, expiresAt: now + this.accessTokenTtl }], now)
  }

  /**
   * Revokes every session of a user (user deleted), or every other one than `except` (the session
   * that changed the password: it goes on, as OWASP ASVS asks).
   */
  async revokeUser(userId: Id, except?: string): Promise<void> {
    const now = this.clock.now()
    const families = await this.store.revokeUser(userId, now, except)
    await this.deny(
      families.map((family) => ({ key: `sid:${family}`, expiresAt: now + this.accessTokenTtl })),
      now
    )
  }

  /**
   * Throws NotAuthenticated when the token's session or the token itself was revoked. Synchronous
   * (undefined) while the local deny-list is fresh; a promise when it is brought up to date first.
   */
  check(payload: { sid?: unknown; jti?: unknown }): Promise<void> | undefined {
    const stale = this.refresh()
    if (stale) return stale.then(() => this.checkLocal(payload))
    this.checkLocal(payload)
    return undefined
  }

  /** Brings the local deny-list up to date when it is older than the sync interval; undefined while it is fresh. */
  refresh(): Promise<void> | undefined {
    return this.clock.now() - this.syncedAt >= this.syncInterval ? this.sync() : undefined
  }

  /**
   * Grows whenever the local deny-list gains a revocation (made here or read from the store): connections logged in
   * with tokens are checked again only then.
   */
  get revision(): number {
    return this.revisions
  }

  /** Reads the revocations other processes made since the last look (one at a time). */
  sync(): Promise<void> {
    this.syncing ??= (async () => {
      const started = this.clock.now()
      const { revocations, cursor } = await this.store.revocationsSince(this.cursor)
      for (const entry of revocations) this.remember(entry)
      this.cursor = cursor
      this.syncedAt = started
      for (const [key, expiresAt] of this.revoked) if (expiresAt <= started) this.revoked.delete(key)
    })().finally(() => {
      this.syncing = undefined
    })
    return this.syncing
  }

  private checkLocal(payload: { sid?: unknown; jti?: unknown }): void {
    const now = this.clock.now()
    if (typeof payload.sid === 'string' && (this.revoked.get(`sid:${payload.sid}`) ?? 0) > now) {
      throw new NotAuthenticated('Session revoked', { name: 'SessionRevoked' })
    }
    if (typeof payload.jti === 'string' && (this.revoked.get(`jti:${payload.jti}`) ?? 0) > now) {
      throw new NotAuthenticated('Access token revoked', { name: 'SessionRevoked' })
    }
  }

  private async deny(entries: Revocation[], now: number): Promise<void> {
    // Seen by this process at once, by the others at their next sync.
    for (const entry of entries) this.remember(entry)
    await this.store.addRevocations(entries, now)
  }

  private remember({ key, expiresAt }: Revocation): void {
    if ((this.revoked.get(key) ?? 0) >= expiresAt) return
    this.revoked.set(key, expiresAt)
    this.revisions++
  }
}

/** When the token expires (its `exp`), or `fallback` when it has none. */
function expiry(payload: TokenPayload, fallback: number): number {
  return typeof payload.exp === 'number' ? payload.exp * 1000 : fallback
}
