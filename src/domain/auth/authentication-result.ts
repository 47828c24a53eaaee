import type { TokenPayload } from './token-service.js'

/** How a caller authenticated: the strategy, and the token and its claims once there is one. */
export interface AuthenticationInfo {
  strategy: string
  accessToken?: string
  payload?: TokenPayload
  [key: string]: unknown
}

/**
 * The result of authenticating, in Feathers' shape (docs/wire-protocol.md, Login): `authentication`
 * says how the caller authenticated and the entity sits under the strategy's entity name (`user`).
 * A strategy that verified an existing token returns it as `accessToken`; otherwise
 * `authentication.payload` holds the claims the new token must carry.
 */
export interface AuthenticationResult {
  accessToken?: string
  /** Sent by a server with sessions: exchanged for a new pair before the access token expires. */
  refreshToken?: string
  authentication: AuthenticationInfo
  [entity: string]: unknown
}

/**
 * What the authentication service answers a login with, and what clients and connections receive: the token is always
 * there.
 */
export type LoginResult = AuthenticationResult & { accessToken: string }
