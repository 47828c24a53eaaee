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
  /** Called once from the authentication service's setup, when every service is registered. */
  setup?(authentication: AuthenticationService): void
  authenticate(data: AuthenticationRequest, params: Params): Promise<AuthenticationResult>
}
