import type { TokenPayload } from '../../domain/auth/token-service.js'
import type { Id } from '../../domain/service/service.js'

/**
 * What the authentication service and the JWT strategy use of server-side sessions, which the sessions module
 * (src/application/sessions) provides: refresh tokens, revocation and the deny-list. Without it, access tokens
 * are stateless JWTs.
 */
export interface AuthenticationSessions {
  /** Access-token lifetime in ms. */
  readonly accessTokenTtl: number
  /** A new session id (`sid`). */
  newFamily(): string
  /** The first refresh token of a new session `family` for `userId`. */
  issueRefreshToken(family: string, userId: Id): Promise<string>
  /** Exchanges a live refresh token for the session's next one; a used one revokes its session (after a window). */
  rotate(refreshToken: string): Promise<{ family: string; userId: Id; refreshToken: string }>
  /** Revokes the session (or the token) of these claims. */
  logout(payload: TokenPayload): Promise<void>
  revokeFamily(family: string): Promise<void>
  /** Revokes every session of a user but `except` (a password change). */
  revokeUser(userId: Id, except?: string): Promise<void>
  /** Throws NotAuthenticated when the token with these claims was revoked; undefined when that is known at once. */
  check(payload: { sid?: unknown; jti?: unknown }): Promise<void> | undefined
  /** Brings the deny-list up to date when it is older than its sync interval; undefined while it is fresh. */
  refresh(): Promise<void> | undefined
  /** Grows whenever the deny-list gains a revocation. */
  readonly revision: number
}

/** Failed-login limits per account and client address (the sessions module's LoginThrottle). */
export interface LoginLimits {
  readonly enabled: boolean
  /** Runs a login unless its keys wait out failures; counts a failure when it throws NotAuthenticated. */
  guard<T>(keys: { account?: string; address?: string }, login: () => Promise<T>): Promise<T>
}
