import { BadRequest } from '../../../domain/errors/errors.js'
import type { Hook, HookContext } from '../../hook-context.js'
import type { AuthenticationService } from '../authentication-service.js'

export interface HashPasswordOptions {
  /** Turns a password into a hash; default: the local strategy's PasswordHasher (bcrypt). */
  hash?: (password: string) => string | Promise<string>
  /** Where the default hasher comes from. */
  authentication?: string
  strategy?: string
}

/**
 * Before hook for create, update and patch: replaces the plain password in `data` (an object or an
 * array of them) with its hash. A value that already looks like a hash is hashed again — the hook
 * cannot tell a hash from a password that happens to look like one, and no exception is made.
 */
export function hashPassword(field = 'password', options: HashPasswordOptions = {}): Hook {
  return async (context: HookContext) => {
    if (context.type !== 'before') throw new Error('The hashPassword hook must be used as a before hook')
    if (!['create', 'update', 'patch'].includes(context.method)) return
    const hash = options.hash ?? defaultHash(context, options)
    const one = async (item: unknown): Promise<unknown> => {
      if (typeof item !== 'object' || item === null) return item
      const value = (item as Record<string, unknown>)[field]
      if (value === undefined) return item
      if (typeof value !== 'string') throw new BadRequest(`'${field}' must be a string`)
      return { ...item, [field]: await hash(value) }
    }
    const { data } = context
    context.data = Array.isArray(data) ? await Promise.all(data.map(one)) : await one(data)
  }
}

function defaultHash(
  context: HookContext,
  { authentication = 'authentication', strategy = 'local' }: HashPasswordOptions
) {
  const found = context.app.paths.includes(authentication)
    ? (context.app.service<AuthenticationService>(authentication).getStrategy(strategy) as
        { hashPassword?: (plain: string) => Promise<string> } | undefined)
    : undefined
  const hashWith = found?.hashPassword
  if (!hashWith) {
    throw new Error(
      `hashPassword needs a hash function: pass { hash } or register a '${strategy}' strategy on the '${authentication}' service`
    )
  }
  return (plain: string) => hashWith.call(found, plain)
}
