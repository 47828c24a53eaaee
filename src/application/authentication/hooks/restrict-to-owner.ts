import { Forbidden, NotAuthenticated } from '../../../domain/errors/errors.js'
import type { Hook, HookContext } from '../../hook-context.js'
import { declareStatuses } from '../../hook-statuses.js'

export interface RestrictToOwnerOptions {
  /** Field of the record naming its owner (e.g. 'userId'; 'id' on the users service itself). */
  ownerField: string
  /** Field of `params.user` the owner field holds (default 'id'). */
  idField?: string
}

/**
 * Before hook for update/patch/remove, after `authenticate`: only the owner may change a record.
 *
 * - With an id, the record is read internally first; someone else's record is a 403 Forbidden (a
 *   missing one stays a 404).
 * - Without an id (multi patch/remove) the call is narrowed to the caller's own records: the owner
 *   condition is ANDed with the query, so a non-owner's `DELETE /messages?text=x` removes only their
 *   own matches. Refusing the whole call would leak whether others' records match; narrowing is what
 *   a caller can already see through find.
 *
 * Internal calls without a user are trusted and pass untouched. The hook declares its 403, so the OpenAPI
 * document lists it on the operations this hook guards.
 */
export function restrictToOwner({ ownerField, idField = 'id' }: RestrictToOwnerOptions): Hook {
  return declareStatuses(async (context: HookContext) => {
    const { params } = context
    const user = params.user
    if (!user) {
      if (params.provider === undefined) return
      throw new NotAuthenticated('Not authenticated')
    }
    const owner = user[idField]
    if (owner === undefined || owner === null)
      throw new Forbidden(`The logged-in user has no '${idField}' to own records with`)
    if (context.id === null || context.id === undefined) {
      const { $and, ...query } = params.query ?? {}
      const mine = { [ownerField]: owner }
      context.params = { ...params, query: { ...query, $and: $and === undefined ? [mine] : [mine, { $and }] } }
      return
    }
    if (!context.service.get) throw new Error(`restrictToOwner on '${context.path}' needs a service with a get method`)
    const record = (await context.service.get(context.id)) as Record<string, unknown>
    const actual = Object.hasOwn(record, ownerField) ? record[ownerField] : undefined
    if (actual === undefined || actual === null || String(actual) !== String(owner)) {
      throw new Forbidden(`You can only ${context.method} your own records in '${context.path}'`)
    }
  }, 403)
}
