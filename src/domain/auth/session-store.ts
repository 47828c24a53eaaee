import type { Id } from '../service/service.js'

/**
 * One refresh token as the server keeps it: by a hash of the token (the token itself is never
 * stored), in a family — every token descended from one login by rotation.
 */
export interface RefreshTokenRecord {
  /** Hash of the token (SecretTokens.hash). */
  id: string
  /** The session: the login this token descends from; access tokens carry it as their `sid` claim. */
  family: string
  userId: Id
  /** Epoch milliseconds, from the app's Clock. */
  createdAt: number
  expiresAt: number
  /** When it was exchanged for a new pair (it is dead from then on); null while unused. */
  usedAt: number | null
  /** When its family was revoked (logout, reuse, password change, deleted user); null otherwise. */
  revokedAt: number | null
}

/**
 * What using a refresh token found, decided atomically (of two concurrent uses of one token exactly one is 'rotated').
 */
export type RefreshTokenUse =
  | { outcome: 'rotated'; record: RefreshTokenRecord }
  | { outcome: 'reused'; record: RefreshTokenRecord }
  | { outcome: 'revoked'; record: RefreshTokenRecord }
  | { outcome: 'unknown' }

/**
 * An entry of the access-token deny-list: `sid:<family>` (every access token of a session) or
 * `jti:<id>` (one token). It is kept only until every token it names has expired.
 */
export interface Revocation {
  key: string
  expiresAt: number
}

/**
 * Where sessions live: refresh tokens and the access-token deny-list. Every process of one app must
 * share it (a database), so that a revocation made by one is seen by all.
 */
export interface SessionStore {
  /** Saves a refresh token; a record with its id already saved is kept as it is. */
  saveRefreshToken(record: RefreshTokenRecord): Promise<void>
  /** Marks an unused, unrevoked token used (at `now`) and says what it was; atomic. */
  useRefreshToken(id: string, now: number): Promise<RefreshTokenUse>
  /** Marks every refresh token of the family revoked. */
  revokeFamily(family: string, now: number): Promise<void>
  /**
   * Marks every refresh token of the user revoked — but those of the family `except` (the session
   * that changed the password) — and answers the families that had a live token.
   */
  revokeUser(userId: Id, now: number, except?: string): Promise<string[]>
  /** Adds deny-list entries (and may drop entries that expired before `now`). */
  addRevocations(revocations: Revocation[], now: number): Promise<void>
  /**
   * Deny-list entries added since `cursor` (all that are kept when `cursor` is undefined), with the
   * cursor for the next call. May answer an entry more than once.
   */
  revocationsSince(cursor: unknown): Promise<{ revocations: Revocation[]; cursor: unknown }>
  /** Drops refresh tokens that expired before `now`. */
  purgeExpired(now: number): Promise<void>
  close?(): Promise<void>
}
export const SessionStore = Symbol.for('SessionStore')
