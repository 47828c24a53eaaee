import type { TokenPayload } from '../../domain/auth/token-service.js'
import type { AuthenticationRequest, Params } from '../../domain/service/service.js'
import type { AuthenticationService } from './authentication-service.js'

/**
 * What a strategy returns, in Feathers' shape: `authentication` says how the caller authenticated and
 * the entity sits under the strategy's entity name (`user`). A strategy that verified an existing
 * token returns it as `accessToken`; otherwise `authentication.payload` holds the claims the new
 * token must carry (a custom Verifier's payload, for instance).
 */
export interface AuthenticationResult {
  accessToken?: string
  authentication: { strategy: string; accessToken?: string; payload?: TokenPayload }
  [entity: string]: unknown
}

/** A named way to authenticate (local, jwt, …), registered on the authentication service. */
export interface AuthenticationStrategy {
  readonly name: string
  /** Key of the entity in results and params (`user`); null when the strategy has no entity. */
  readonly entity: string | null
  /** Path of the service that holds the entities. */
  readonly service: string
  /** Called once from the authentication service's setup, when every service is registered. */
  setup?(authentication: AuthenticationService): void
  authenticate(data: AuthenticationRequest, params: Params): Promise<AuthenticationResult>
}
