import { NotAuthenticated } from '../../../domain/errors/errors.js'
import type { Hook, HookContext } from '../../hook-context.js'
import type { AuthenticationService } from '../authentication-service.js'

/** Marks a hook that requires authentication, with its strategies (read by the OpenAPI generator). */
export const AUTHENTICATES = Symbol.for('plumage.authenticates')

export interface AuthenticateSettings {
  /** Path of the authentication service (default 'authentication'). */
  service?: string
  strategies: string[]
}

/**
 * Before hook: external calls must authenticate with one of `strategies` (usually 'jwt'). Sets
 * `params.user` (the full entity, password hash included, as v5 does), `params.authentication`
 * and `params.authenticated`. Internal calls without credentials pass untouched.
 */
export function authenticate(settings: string | AuthenticateSettings, ...strategies: string[]): Hook {
  const { service = 'authentication', strategies: allowed } =
    typeof settings === 'string' ? { strategies: [settings, ...strategies] } : settings
  if (allowed.length === 0) throw new Error('The authenticate hook needs at least one allowed strategy')
  // Not an async function: a call already authenticated (a resolver's loader) passes without a promise to await.
  const hook = (context: HookContext): Promise<void> | undefined => {
    if (context.type !== 'before')
      return Promise.reject(new NotAuthenticated('The authenticate hook must be used as a before hook'))
    const { params } = context
    if (params.authenticated === true) return
    if (params.authentication) {
      const auth = context.app.service<AuthenticationService>(service)
      const { authentication, provider: _provider, ...rest } = params
      return auth.authenticate(authentication, rest, ...allowed).then(({ accessToken: _token, ...result }) => {
        context.params = { ...params, ...result, authenticated: true }
      })
    }
    if (params.provider !== undefined) return Promise.reject(new NotAuthenticated('Not authenticated'))
  }
  return Object.assign(hook, { [AUTHENTICATES]: allowed })
}
