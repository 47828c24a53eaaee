import type { TokenPayload } from '../../domain/auth/token-service.js'
import { isRecord } from '../../domain/objects.js'
import type { Data } from '../../domain/service/service.js'
import type { AuthenticationService } from '../authentication/authentication-service.js'
import type { AuthenticationSessions } from '../authentication/session-ports.js'
import type { HookApp, HookContext } from '../hook-context.js'
import { declaredIdField } from '../id-field.js'

/**
 * Deleting an entity revokes all its sessions; changing its password through its service revokes
 * all but the session that made the change (its access token's `sid`), which goes on (on every
 * instance: through the session store). The hooks go on each strategy's entity service.
 */
export function revokeOnEntityChanges(
  app: HookApp,
  authentication: Pick<AuthenticationService, 'authStrategies' | 'getStrategy'>,
  sessions: AuthenticationSessions
): void {
  const passwordFields = new Map<string, Set<string>>()
  for (const name of authentication.authStrategies) {
    const strategy = authentication.getStrategy(name)
    if (!strategy) continue
    if (strategy.entity === null || !app.paths.includes(strategy.service)) continue
    const fields = passwordFields.get(strategy.service) ?? new Set<string>()
    const field = (strategy as { passwordField?: unknown }).passwordField
    if (typeof field === 'string') fields.add(field)
    passwordFields.set(strategy.service, fields)
  }
  for (const [path, fields] of passwordFields) {
    const idField = declaredIdField(app.service(path)) ?? 'id'
    const revoke = async (context: HookContext) => {
      const changedPassword = (item: unknown) =>
        typeof item === 'object' && item !== null && [...fields].some((field) => (item as Data)[field] !== undefined)
      if (
        context.method !== 'remove' &&
        !(Array.isArray(context.data) ? context.data.some(changedPassword) : changedPassword(context.data))
      )
        return
      const results = Array.isArray(context.result) ? context.result : [context.result]
      const payload = (context.params.authentication as { payload?: TokenPayload } | undefined)?.payload
      for (const entity of results) {
        const id = isRecord(entity) ? entity[idField] : undefined
        if (typeof id !== 'string' && typeof id !== 'number') continue
        // The caller's own session, when it changed its own password.
        const current =
          context.method !== 'remove' && typeof payload?.sid === 'string' && payload.sub === String(id)
            ? payload.sid
            : undefined
        await sessions.revokeUser(id, current)
      }
    }
    app.service(path).hooks({ after: { update: [revoke], patch: [revoke], remove: [revoke] } })
  }
}
