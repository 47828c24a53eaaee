import { BadRequest, Conflict } from '../../domain/errors/errors.js'
import type { Data, Id, Query } from '../../domain/service/service.js'
import type { UniqueKeys } from '../../domain/unique-keys.js'
import type { Hook, HookContext } from '../hook-context.js'
import { declaredIdField } from '../id-field.js'

/** Marks the `before` hook with its field (the OpenAPI generator documents the 409). */
export const UNIQUE_FIELD = Symbol.for('plumage.uniqueField')

export interface UniqueFieldOptions {
  /** Where keys are claimed (the UniqueKeys port, memory or RethinkDB, bound in the composition root). */
  keys: UniqueKeys
  /** The value that must be unique, from the field's value (default: trimmed and lower-cased). */
  normalize?: (value: string) => string
  /** The 409's message (default: `<field> already registered`). */
  message?: string
  /** Key namespace (default: `<service path>.<field>`). */
  scope?: string
}

/**
 * Hooks to register on the service: `before` on create/update/patch, `after` on
 * create/update/patch/remove, `error` on all, and `lookup` before find (after validation).
 */
export interface UniqueFieldHooks {
  before: Hook
  after: Hook
  error: Hook
  lookup: Hook
}

interface CallState {
  scope: string
  /** Keys this call claimed: released if the call fails. */
  claimed: string[]
  /** Keys the call's records held before: released once it succeeded. */
  replaced: string[]
  /**
   * The key an update or patch sets (claimed now, or the record's own already): its holder is recorded after the write.
   */
  set?: string
}

/**
 * Keeps `field` unique across a service's records, also under concurrency: before a write, the
 * normalised value is claimed in the UniqueKeys port (atomic: of 100 simultaneous signups with one
 * email exactly one claims it), and a value already claimed is a 409 Conflict. A failed write gives
 * its claim back; a changed value (update/patch) frees the old one, remove frees the record's.
 * A query-then-insert in a hook could not do this: two calls both find nothing, then both insert.
 *
 * The value itself is stored as sent; only the key is normalised. After a write the key records its
 * holder's id, and `lookup` turns a find by the field (`{ email: 'ann@x.com' }`) into a find by that
 * id, so equality on the field ignores what the normalisation ignores (case, surrounding spaces), at
 * the cost of two primary-key reads. A key claimed before holders were recorded (a record of an
 * earlier version) is looked up by its normalised value, as such records were stored.
 *
 * Register `before` after the schema validation and the ownership checks (an invalid or unauthorised
 * call claims nothing), and before slow hooks such as `hashPassword` (a losing signup costs no hash).
 */
export function uniqueField(field: string, options: UniqueFieldOptions): UniqueFieldHooks {
  const { keys } = options
  const normalize = options.normalize ?? ((value: string) => value.trim().toLowerCase())
  const message = options.message ?? `${field} already registered`
  const calls = new WeakMap<HookContext, CallState>()
  /** The key a field value claims: the normalised string; non-strings claim nothing. */
  const claimedKeyOf = (value: unknown) => (typeof value === 'string' ? normalize(value) : undefined)
  const conflict = () => new Conflict(message, { errors: { [field]: message } })

  const claimAll = async (state: CallState, wanted: string[]) => {
    for (const key of wanted) {
      if (!(await keys.claim(state.scope, key))) {
        await releaseAll(state.scope, state.claimed)
        state.claimed = []
        throw conflict()
      }
      state.claimed.push(key)
    }
  }
  const releaseAll = (scope: string, list: string[]) => Promise.all(list.map((key) => keys.release(scope, key)))

  const before: Hook = async (context) => {
    const { method, data } = context
    if (method !== 'create' && method !== 'update' && method !== 'patch') return
    const state: CallState = { scope: options.scope ?? `${context.path}.${field}`, claimed: [], replaced: [] }
    if (method === 'create') {
      const wanted = (Array.isArray(data) ? data : [data])
        .map((item) => claimedKeyOf((item as Data | undefined)?.[field]))
        .filter((key) => key !== undefined)
      if (new Set(wanted).size !== wanted.length) throw conflict()
      calls.set(context, state)
      await claimAll(state, wanted)
      return
    }
    const wanted = claimedKeyOf((data as Data | undefined)?.[field])
    if (wanted === undefined) return
    if (context.id === null || context.id === undefined)
      throw new BadRequest(`'${field}' is unique: it cannot be set on several records at once`)
    if (!context.service.get) throw new Error(`uniqueField on '${context.path}' needs a service with a get method`)
    const current = claimedKeyOf(((await context.service.get(context.id as Id)) as Data)[field])
    state.set = wanted
    calls.set(context, state)
    if (current === wanted) return
    await claimAll(state, [wanted])
    if (current !== undefined) state.replaced.push(current)
  }

  const after: Hook = async (context) => {
    const scope = options.scope ?? `${context.path}.${field}`
    const idField = declaredIdField(context.service) ?? 'id'
    const records = (Array.isArray(context.result) ? context.result : [context.result]) as (Data | undefined)[]
    if (context.method === 'remove') {
      await releaseAll(
        scope,
        records.map((record) => claimedKeyOf(record?.[field])).filter((key) => key !== undefined)
      )
      return
    }
    const state = calls.get(context)
    if (!state) return
    // The write is done: from here a failure must not give its claims back (the error hook would).
    calls.delete(context)
    await releaseAll(state.scope, state.replaced)
    if (context.method === 'create') {
      const items = (Array.isArray(context.data) ? context.data : [context.data]) as (Data | undefined)[]
      await Promise.all(
        items.map((item, index) => assign(scope, claimedKeyOf(item?.[field]), records[index]?.[idField]))
      )
    } else {
      // The stored id (the call's may be a REST string for a numeric id).
      await assign(scope, state.set, records[0]?.[idField] ?? context.id)
    }
  }
  const assign = async (scope: string, key: string | undefined, holder: unknown) => {
    if (key !== undefined && (typeof holder === 'string' || typeof holder === 'number'))
      await keys.assign(scope, key, holder)
  }

  const lookup: Hook = async (context) => {
    const query = context.params.query
    const value = query?.[field]
    if (typeof value !== 'string') return
    const key = normalize(value)
    const holder = await keys.holder(options.scope ?? `${context.path}.${field}`, key)
    const idField = declaredIdField(context.service) ?? 'id'
    const { [field]: _value, ...rest } = query!
    const byId: Query =
      idField in rest
        ? { ...rest, $and: [...(Array.isArray(rest.$and) ? rest.$and : []), { [idField]: holder }] }
        : { ...rest, [idField]: holder }
    context.params = { ...context.params, query: holder === undefined ? { ...query, [field]: key } : byId }
  }

  const error: Hook = async (context) => {
    const state = calls.get(context)
    if (!state) return
    calls.delete(context)
    await releaseAll(state.scope, state.claimed)
  }

  return { before: Object.assign(before, { [UNIQUE_FIELD]: field }), after, error, lookup }
}
