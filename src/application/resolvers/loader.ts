import DataLoader from 'dataloader'
import type { Id, Params } from '../../domain/service/service.js'
import type { HookContext } from '../hook-context.js'
import { declaredIdField } from '../id-field.js'

/*
 * Batched gets for resolvers: `loaderFor(context, 'users').load(id)` in the resolver of each of 25 messages is
 * one `find` of the users service with `{ id: { $in: [...] } }`, not 25 gets. One loader per call and target
 * service, kept on the call's context under a symbol of this module, so it is dropped with it: the same id asked
 * twice in a call is fetched once, and nothing is cached across calls (a record changed since is read again by the
 * next call). Not a WeakMap keyed by contexts: one short-lived entry per call made the garbage collector's work
 * (ephemerons) cost more than the batched find itself (bench:rest's resolver rows).
 */

/** Records by id, from one service; `undefined` for an id it did not answer (missing, or hidden from the caller). */
export type RecordLoader<T> = DataLoader<Id, T | undefined, string>

/** The loaders of one call, by target path, on its context. */
const LOADERS = Symbol('plumage.loaders')

/** The largest `$in` one query carries; more ids in one tick are several queries. */
const MAX_BATCH = 500

/**
 * The loader of the records of the service at `path` for the call of `context` (created on first use).
 *
 * Which params it calls with — it must never return what the caller could not get by asking the service itself:
 * - the caller's identity, `provider`, `user`, `authentication` and `authenticated`: the target's hooks apply as
 *   they would to the caller (authentication, ownership, `protect` for external callers), and a record the
 *   caller may not see is simply not answered (the property is left out; nothing says why);
 * - nothing else of the caller's (its query, pagination and adapter options are its own service's);
 * - a result schema that closes the record (`additionalProperties: false`, as users' does) is the public shape
 *   of the target's records: fields it does not declare (the password hash) are dropped, also for internal
 *   calls and published events, whose params carry no provider and would otherwise pass them.
 */
export function loaderFor<T = Record<string, unknown>>(context: HookContext, path: string): RecordLoader<T> {
  const holder = context as unknown as { [LOADERS]?: Map<string, RecordLoader<unknown>> }
  const byPath = (holder[LOADERS] ??= turnScope(context))
  let loader = byPath.get(path)
  if (!loader) byPath.set(path, (loader = createLoader(context, path)))
  return loader as RecordLoader<T>
}

/**
 * Gives `to` the loaders of `from` (creating them on first use): calls made for one purpose over several ticks —
 * a live resume resolving its missed records, each with a context of its own — batch and cache as one call.
 */
export function shareLoaders(from: HookContext, to: HookContext): void {
  const source = from as unknown as { [LOADERS]?: Loaders }
  ;(to as unknown as { [LOADERS]?: Loaders })[LOADERS] = source[LOADERS] ??= turnScope(from)
}

type Loaders = Map<string, RecordLoader<unknown>>
/** This tick's shared loaders by app and caller, dropped when DataLoader sends the tick's loads (on a next tick). */
let turnScopes: Map<unknown, Map<string, Loaders>> | undefined
/** A call's loaders: in one tick, the server's calls (store events) share, and one user token's calls; else its own. */
function turnScope({ app, params: { provider, user, authentication, authenticated } }: HookContext): Loaders {
  const token = (authentication as { accessToken?: unknown } | undefined)?.accessToken
  const key = [provider, user, authentication, authenticated].every((value) => value === undefined)
    ? 'server'
    : typeof provider === 'string' && typeof token === 'string' && ['string', 'number'].includes(typeof user?.id)
      ? JSON.stringify([provider, user!.id, token, authenticated])
      : undefined
  if (key === undefined) return new Map()
  if (!turnScopes) void Promise.resolve().then(() => process.nextTick(() => (turnScopes = undefined)))
  const byCaller = (turnScopes ??= new Map()).get(app) ?? turnScopes.set(app, new Map()).get(app)!
  return byCaller.get(key) ?? byCaller.set(key, new Map()).get(key)!
}

function createLoader(context: HookContext, path: string): RecordLoader<unknown> {
  const target = context.app.service(path)
  const idField = declaredIdField(target) ?? 'id'
  const publicFields = declaredFields(context, path)
  const params = callerParams(context.params)
  return new DataLoader<Id, unknown, string>(
    async (ids) => {
      const found = await target.find({ ...params, query: { [idField]: { $in: [...ids] } }, paginate: false })
      const records = Array.isArray(found) ? found : found.data
      const byId = new Map<string, unknown>()
      for (const record of records as Record<string, unknown>[])
        byId.set(String(record[idField]), publicFields ? pick(record, publicFields) : record)
      return ids.map((id) => byId.get(String(id)))
    },
    // 3 and '3' are the same record (a REST query's id arrives as a string before coercion).
    { cacheKeyFn: (id) => String(id), maxBatchSize: MAX_BATCH }
  )
}

/**
 * The caller's identity. A `user` is only ever set by authentication (transports never take it from clients):
 * with one, the caller counts as authenticated — also in an event's context, which carries its recipient's user
 * and provider but no token — so the target's `authenticate` does not verify the token again per batch.
 */
function callerParams({ provider, user, authentication, authenticated }: Params): Params {
  const params: Params = {}
  if (provider !== undefined) params.provider = provider
  if (user !== undefined) params.user = user
  if (authentication !== undefined) params.authentication = authentication
  if (authenticated !== undefined || user !== undefined) params.authenticated = authenticated ?? true
  return params
}

/** The properties of closed result schemas, by schema: a loader per call would otherwise make the set per call. */
const fieldsBySchema = new WeakMap<object, ReadonlySet<string>>()

/** The properties the target's result schema declares, when it allows no others; undefined otherwise. */
function declaredFields(context: HookContext, path: string): ReadonlySet<string> | undefined {
  const result = context.app.schemasOf(path)?.schemas.result
  if (!result || result.additionalProperties !== false || !result.properties) return undefined
  let fields = fieldsBySchema.get(result)
  if (!fields) fieldsBySchema.set(result, (fields = new Set(Object.keys(result.properties))))
  return fields
}

function pick(record: Record<string, unknown>, fields: ReadonlySet<string>): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(record)) if (fields.has(key)) copy[key] = record[key]
  return copy
}
