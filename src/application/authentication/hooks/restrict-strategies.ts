import { NotAuthenticated } from '../../../domain/errors/errors.js'
import type { AuthenticationRequest } from '../../../domain/service/service.js'
import type { Hook, HookContext } from '../../hook-context.js'
import type { AuthenticationService } from '../authentication-service.js'

/**
 * Before hook for the authentication service's `create`: a new access
 * token is issued only for a valid JWT or a successful authentication with one of `strategies`
 * (typically `restrictStrategies('jwt', 'local')`). The result is handed to `create`, so the
 * password is compared once.
 */
export function restrictStrategies(...strategies: string[]): Hook {
  if (strategies.length === 0) throw new Error('restrictStrategies needs at least one strategy name')
  return async (context: HookContext) => {
    if (context.type !== 'before' || context.method !== 'create') {
      throw new NotAuthenticated("restrictStrategies must be a before hook of the authentication service's create")
    }
    const auth = context.service as unknown as AuthenticationService
    const authResult = await auth.authenticate(context.data as AuthenticationRequest, context.params, ...strategies)
    context.params = { ...context.params, authResult }
  }
}
