import { NotAuthenticated, NotFound } from '../../domain/errors/errors.js'
import type { AuthenticationRequest, Data } from '../../domain/service/service.js'
import type { AuthenticationService } from '../authentication/authentication-service.js'
import type { AuthenticationResult, AuthenticationStrategy } from '../authentication/authentication-strategy.js'

export interface RefreshStrategyOptions {
  name?: string
  entity?: string
  service?: string
}

/**
 * `{ strategy: 'refresh', refreshToken }`: exchanges a live refresh token for a new access token and
 * the next refresh token of the same session (Sessions.rotate). The used token is dead; presenting it
 * again revokes the session, but within the sessions' reuse window (a retry) answers the same next token.
 */
export class RefreshStrategy implements AuthenticationStrategy {
  readonly name: string
  readonly refreshes = true
  readonly entity: string
  readonly service: string
  private auth?: AuthenticationService

  constructor(options: RefreshStrategyOptions = {}) {
    this.name = options.name ?? 'refresh'
    this.entity = options.entity ?? 'user'
    this.service = options.service ?? 'users'
  }

  setup(auth: AuthenticationService): void {
    if (!auth.sessions)
      throw new Error(`The '${this.name}' strategy needs sessions: pass { sessions } to the AuthenticationService`)
    this.auth = auth
  }

  async authenticate(data: AuthenticationRequest): Promise<AuthenticationResult> {
    const { refreshToken } = data
    if (typeof refreshToken !== 'string' || refreshToken === '') throw new NotAuthenticated('No refresh token')
    const auth = this.auth
    if (!auth?.sessions)
      throw new Error(
        `The '${this.name}' strategy is not set up: register it on the authentication service and call app.setup()`
      )
    const { family, userId, refreshToken: next } = await auth.sessions.rotate(refreshToken)
    let entity: Data
    try {
      entity = (await auth.application.service(this.service).get(userId)) as Data
    } catch (error) {
      if (!(error instanceof NotFound)) throw error
      await auth.sessions.revokeFamily(family)
      throw new NotAuthenticated(`The ${this.entity} of this refresh token no longer exists`)
    }
    // `sid` keeps the new access token in the same session.
    return {
      authentication: { strategy: this.name, payload: { sid: family } },
      [this.entity]: entity,
      refreshToken: next
    }
  }
}
