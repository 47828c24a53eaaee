import { authenticate } from '../../application/authentication/hooks/authenticate.js'
import { forbidQueryOn } from '../../application/authentication/hooks/forbid-query-on.js'
import { hashPassword } from '../../application/authentication/hooks/hash-password.js'
import { protect } from '../../application/authentication/hooks/protect.js'
import { restrictToOwner } from '../../application/authentication/hooks/restrict-to-owner.js'
import type { HookMap } from '../../application/hook-context.js'
import { resolveData } from '../../application/resolvers/index.js'
import { uniqueField } from '../../application/schema/unique-field.js'
import { validateSchemas } from '../../application/schema/validate-schemas.js'
import type { UniqueKeys } from '../../domain/unique-keys.js'
import { userDataResolver } from './users.resolvers.js'

export interface UsersHooksOptions {
  /** Where emails are claimed; must be shared by every process of one database. */
  uniqueKeys: UniqueKeys
  /**
   * With the authentication service: every method but signup needs a token, passwords are hashed,
   * and users change only themselves. Without (transport tests), nothing needs a login and
   * passwords stay as sent.
   */
  authentication: boolean
}

/**
 * The users service's hooks. Order matters: log in, validate, check ownership, claim the email,
 * then hash (a refused or losing signup costs no bcrypt round). A signup's avatar is set once it is valid
 * (users.resolvers.ts). Emails are stored as typed; a find by email (the login's lookup) ignores case
 * through the claimed key.
 */
export function usersHooks({ uniqueKeys, authentication }: UsersHooksOptions): HookMap {
  const login = authentication ? [authenticate('jwt')] : []
  const hash = authentication ? [hashPassword('password')] : []
  // The ownership example: users change only themselves (403 otherwise).
  const itself = authentication ? [restrictToOwner({ ownerField: 'id' })] : []
  const validate = validateSchemas()
  const email = uniqueField('email', { keys: uniqueKeys, message: 'email already registered' })
  return {
    before: {
      all: [forbidQueryOn('password')],
      find: [...login, validate, email.lookup],
      get: [...login, validate],
      remove: [...login, ...itself, validate],
      create: [validate, resolveData(userDataResolver), email.before, ...hash],
      update: [...login, ...itself, validate, resolveData(userDataResolver), email.before, ...hash],
      patch: [...login, ...itself, validate, email.before, ...hash]
    },
    after: {
      all: [protect('password')],
      create: [email.after],
      update: [email.after],
      patch: [email.after],
      remove: [email.after]
    },
    error: { all: [email.error] }
  }
}
