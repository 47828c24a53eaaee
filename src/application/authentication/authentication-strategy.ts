import type { AuthenticationResult } from '../../domain/auth/authentication-result.js'
import type { AuthenticationRequest, Params } from '../../domain/service/service.js'
import type { AuthenticationService } from './authentication-service.js'

export type { AuthenticationResult }

/** A named way to authenticate (local, jwt, …), registered on the authentication service. */
export interface AuthenticationStrategy {
  readonly name: string
  /** Key of the entity in results and params (`user`); null when the strategy has no entity. */
  readonly entity: string | null
  /** Path of the service that holds the entities. */
  readonly service: string
  /**
   * True for a strategy that exchanges a refresh token (the sessions module's): a failed refresh on a logged-in
   * connection logs it out, and the login description says what it takes. Its result's `refreshToken` is the
   * session's next one, answered as it is (any other strategy's login starts a session with a new one).
   */
  readonly refreshes?: boolean
  /** Called once from the authentication service's setup, when every service is registered. */
  setup?(authentication: AuthenticationService): void
  authenticate(data: AuthenticationRequest, params: Params): Promise<AuthenticationResult>
}
