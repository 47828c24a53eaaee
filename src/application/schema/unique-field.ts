import { BadRequest, Conflict, NotFound, type FeathersError } from '../../domain/errors/errors.js'
import type { Data, Id, Params, Query } from '../../domain/service/service.js'
import type { UniqueKeys } from '../../domain/unique-keys.js'
import type { Hook, HookContext } from '../hook-context.js'
import { HOOK_SETUP, type SetupTarget } from '../hook-setup.js'
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
 *
 * `before` also carries the back-fill (hook-setup.ts): when the app is set up, every record the service
 * holds gets its key, so a field made unique on a service that already has records is unique from the
 * first call on; records that already collide stop the start with a 409 naming them (see `backfill`).
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
  const releaseAll = (scope: string, list: string[]) => releaseKeys(keys, scope, list)

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

  const after: Hook = (context) => afterWrite(context, { field, keys, scope: options.scope, calls, claimedKeyOf })

  const lookup: Hook = (context) => lookupByHolder(context, { field, keys, scope: options.scope, normalize })

  const error: Hook = async (context) => {
    const state = calls.get(context)
    if (!state) return
    calls.delete(context)
    await releaseAll(state.scope, state.claimed)
  }

  const setup = (target: SetupTarget) =>
    whileUnavailable(() =>
      backfill(target, { keys, field, normalize: claimedKeyOf, scope: options.scope ?? `${target.path}.${field}` })
    )

  return { before: Object.assign(before, { [UNIQUE_FIELD]: field, [HOOK_SETUP]: setup }), after, error, lookup }
}

/** What the hooks of one unique field share. */
interface FieldHooksState {
  field: string
  keys: UniqueKeys
  scope: string | undefined
  calls: WeakMap<HookContext, CallState>
  claimedKeyOf(value: unknown): string | undefined
}

const releaseKeys = (keys: UniqueKeys, scope: string, list: string[]) =>
  Promise.all(list.map((key) => keys.release(scope, key)))

/**
 * After a write: a remove frees its records' keys; a create or change records the holders of the keys it
 * claimed and frees the ones it replaced.
 */
async function afterWrite(context: HookContext, { field, keys, scope: named, calls, claimedKeyOf }: FieldHooksState) {
  const scope = named ?? `${context.path}.${field}`
  const idField = declaredIdField(context.service) ?? 'id'
  const records = (Array.isArray(context.result) ? context.result : [context.result]) as (Data | undefined)[]
  if (context.method === 'remove') {
    await releaseKeys(
      keys,
      scope,
      records.map((record) => claimedKeyOf(record?.[field])).filter((key) => key !== undefined)
    )
    return
  }
  const state = calls.get(context)
  if (!state) return
  // The write is done: from here a failure must not give its claims back (the error hook would).
  calls.delete(context)
  await releaseKeys(keys, state.scope, state.replaced)
  const assign = async (key: string | undefined, holder: unknown) => {
    if (key !== undefined && (typeof holder === 'string' || typeof holder === 'number'))
      await keys.assign(scope, key, holder)
  }
  if (context.method === 'create') {
    const items = (Array.isArray(context.data) ? context.data : [context.data]) as (Data | undefined)[]
    await Promise.all(items.map((item, index) => assign(claimedKeyOf(item?.[field]), records[index]?.[idField])))
  } else {
    // The stored id (the call's may be a REST string for a numeric id).
    await assign(state.set, records[0]?.[idField] ?? context.id)
  }
}

/** A find by the field becomes a find by the id of the key's holder (or by the normalised value, for old records). */
async function lookupByHolder(
  context: HookContext,
  {
    field,
    keys,
    scope,
    normalize
  }: { field: string; keys: UniqueKeys; scope: string | undefined; normalize(value: string): string }
) {
  const query = context.params.query
  const value = query?.[field]
  if (typeof value !== 'string') return
  const key = normalize(value)
  const holder = await keys.holder(scope ?? `${context.path}.${field}`, key)
  const idField = declaredIdField(context.service) ?? 'id'
  const { [field]: _value, ...rest } = query!
  const byId: Query =
    idField in rest
      ? { ...rest, $and: [...(Array.isArray(rest.$and) ? rest.$and : []), { [idField]: holder }] }
      : { ...rest, [idField]: holder }
  context.params = { ...context.params, query: holder === undefined ? { ...query, [field]: key } : byId }
}

/** How many keys a back-fill settles at once (each is one or two round trips to the keys' store). */
const BACKFILL_CONCURRENCY = 32

/** How long a back-fill keeps trying while the database answers 503, and its first pause (doubled each time). */
const BACKFILL_PATIENCE_MS = 30_000
const BACKFILL_FIRST_PAUSE_MS = 50

/**
 * Runs `step` again while it fails with a 503 (Unavailable), for up to BACKFILL_PATIENCE_MS. Instances
 * starting together on a database cluster meet moments the store reports as unavailable — a table another
 * instance has just created under the same name and is still repairing, a replica still moving — that pass
 * within a second; the back-fill is the first read of the service's records, so it must not make them fatal.
 * Every claim it makes is idempotent, so running it again from the start is safe.
 */
async function whileUnavailable(step: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + BACKFILL_PATIENCE_MS
  for (let pause = BACKFILL_FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, 2_000)) {
    try {
      return await step()
    } catch (error) {
      if ((error as FeathersError | undefined)?.code !== 503 || Date.now() + pause > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
  }
}
/** How many collisions the error's message lists (its `data` has all of them). */
const LISTED_COLLISIONS = 10

interface Backfill {
  keys: UniqueKeys
  field: string
  scope: string
  normalize: (value: unknown) => string | undefined
}

interface RawService {
  find?(params: Params): Promise<unknown>
  get?(id: Id, params: Params): Promise<unknown>
}

/**
 * Claims the key of every record `target` holds, each with its record's id, so that records written
 * before the field was unique (or straight into the database) count. It runs at every start and is
 * idempotent: a key its record already holds is left alone, one claimed by an earlier version (no
 * holder) is given its record, and one whose holder no longer has the value (removed or changed in the
 * database) moves to the record that has it. Several instances starting at once agree: a claim names
 * its holder atomically, so the loser reads the winner's id, its own record's.
 *
 * Records that share a key stop it: a 409 naming the field and, per normalised value, the ids that
 * hold it (found among the records read, or a record that got the key since), so that they can be
 * fixed before the service starts answering — until then every one of them could be the one a login
 * or a find by the field returns. It reads the id and the field of every record in one query.
 */
async function backfill({ path, service }: SetupTarget, options: Backfill): Promise<void> {
  const { field, normalize } = options
  const raw = service as RawService
  if (!raw.find) throw new Error(`uniqueField on '${path}' needs a service with a find method`)
  const idField = declaredIdField(service) ?? 'id'
  const found = await raw.find({ paginate: false, query: { $select: [idField, field] } })
  const records = (Array.isArray(found) ? found : ((found as { data?: unknown[] }).data ?? [])) as Data[]
  const idsByKey = new Map<string, Id[]>()
  for (const record of records) {
    const key = normalize(record[field])
    const id = record[idField]
    if (key === undefined || (typeof id !== 'string' && typeof id !== 'number')) continue
    idsByKey.set(key, [...(idsByKey.get(key) ?? []), id])
  }
  const collisions = [...idsByKey].filter(([, ids]) => ids.length > 1).map(([value, ids]) => ({ value, ids }))
  if (collisions.length === 0) {
    const single = [...idsByKey].map(([key, [id]]) => ({ key, id: id! }))
    for (let start = 0; start < single.length; start += BACKFILL_CONCURRENCY) {
      const settled = await Promise.all(
        single.slice(start, start + BACKFILL_CONCURRENCY).map(({ key, id }) => settle(raw, options, key, id))
      )
      for (const collision of settled) if (collision) collisions.push(collision)
    }
  }
  if (collisions.length > 0) throw duplicates(path, field, collisions)
}

/** Gives `key` to record `id`; a collision when another record holds it and still has the value. */
async function settle(
  service: RawService,
  { keys, field, scope, normalize }: Backfill,
  key: string,
  id: Id
): Promise<{ value: string; ids: Id[] } | undefined> {
  if (await keys.claim(scope, key, id)) return undefined
  const holder = await keys.holder(scope, key)
  if (holder !== undefined && String(holder) === String(id)) return undefined
  if (holder !== undefined && normalize(await fieldOf(service, holder, field)) === key)
    return { value: key, ids: [id, holder] }
  await keys.assign(scope, key, id)
  return undefined
}

/** The field of record `id`, undefined when the record is gone. */
async function fieldOf(service: RawService, id: Id, field: string): Promise<unknown> {
  if (!service.get) return undefined
  try {
    return ((await service.get(id, {})) as Data | undefined)?.[field]
  } catch (error) {
    if (error instanceof NotFound) return undefined
    throw error
  }
}

function duplicates(path: string, field: string, found: { value: string; ids: Id[] }[]): FeathersError {
  // In id order, whatever order the store read them in: the same message on every instance and start.
  const order = (a: Id, b: Id) =>
    typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b))
  const collisions = found.map(({ value, ids }) => ({ value, ids: [...ids].sort(order) }))
  const listed = collisions
    .slice(0, LISTED_COLLISIONS)
    .map(({ value, ids }) => `'${value}' (ids ${ids.map((id) => JSON.stringify(id)).join(', ')})`)
  const more = collisions.length > LISTED_COLLISIONS ? ` and ${collisions.length - LISTED_COLLISIONS} more` : ''
  return new Conflict(
    `'${field}' of '${path}' is unique but ${collisions.length} value(s) are held by several records: ` +
      `${listed.join('; ')}${more}. Change or remove the duplicates, then start again.`,
    { field, duplicates: collisions }
  )
}
