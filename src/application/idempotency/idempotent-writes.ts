import { BadRequest } from '../../domain/errors/errors.js'
import type { Params } from '../../domain/service/service.js'
import type { KeyedWrite, KeyedWrites } from '../../domain/store/keyed-write.js'
import { coreOf } from '../app-core.js'
import type { AroundHook, HookContext, HookMap } from '../hook-context.js'
import { eventContext, runResolvers } from '../event-stages.js'
import { withoutFields } from '../protected-fields.js'
import { parseIdempotencyKey } from './idempotency-key.js'

/** Where a socket call (or any call) carries its key: a member of the query, taken out before the query is read. */
export const QUERY_KEY = '$idempotencyKey'
const EVENTS: Record<string, string> = { create: 'created', update: 'updated', patch: 'patched', remove: 'removed' }
/** The REST request header, as node lower-cases it. */
const HEADER = 'idempotency-key'

export interface IdempotencySettings {
  /** How long a key and its answer are kept, in ms (IDEMPOTENCY_RETENTION, default 24 h). */
  retentionMs: number
  /** How long a repeat waits for the first request of its key still in flight, in ms, before a 409. */
  waitMs: number
  /** A short digest of a text (SHA-256, given by the wiring: the application imports no node built-in). */
  digest(text: string): string
}

/**
 * The app hooks of the idempotency module (README "Retries and idempotency", ADR 0020): around create, update,
 * patch and remove, a call that carries a key — the `Idempotency-Key` header over REST, `$idempotencyKey` in the
 * query over any transport — has a KeyedWrite in `params.idempotency`, which the service's store honours (a store
 * with `keyedWrites`). A repeat answered from the stored answer emits no event. A call without a key passes through.
 */
export function idempotencyHooks(settings: IdempotencySettings): HookMap {
  const around: AroundHook = (context, next) => {
    let key: string | undefined
    try {
      key = keyOf(context.params)
    } catch (error) {
      return Promise.reject(error)
    }
    // A service over a store that honours keys (the handle's prototype is the service: AdapterService's `store`).
    const keys = (context.service as { store?: { keyedWrites?: KeyedWrites } }).store?.keyedWrites
    if (key === undefined || keys === undefined) return next()
    return keyedCall(context, next, keys, keyedWrite(context, key, keys, settings))
  }
  return { around: { create: [around], update: [around], patch: [around], remove: [around] } }
}

/**
 * Runs a keyed call. The store stored the key with its write's own answer, atomically (ADR 0020); nothing is kept
 * after the hooks, so a crash between the commit and the reply loses nothing: a repeat is answered from the stored
 * answer the same way whether the first reply was sent or not. A repeat runs the hooks again (the caller must be
 * known: keys are per user), the store answers the stored records, the after hooks render them, and no event is
 * emitted. A repeat a before hook refused because the first request changed things (the record it removed is gone):
 * the stored records with the service's protected fields removed, as its events carry them, instead of the error.
 */
async function keyedCall(
  context: HookContext,
  next: () => Promise<void>,
  keys: KeyedWrites,
  keyed: KeyedWrite
): Promise<void> {
  context.params.idempotency = keyed
  try {
    await next()
  } catch (error) {
    const stored = keyed.handled ? undefined : await keys.answer(keyed)
    if (stored === undefined) throw error
    context.error = undefined
    return await answerWith(context, stored.result)
  }
  if (keyed.replayed) context.event = null
}

/**
 * The stored answer as the call's result, rendered as the write's events are (protected fields removed, the event
 * resolvers of the service run), shaped as the method answers.
 */
async function answerWith(context: HookContext, stored: unknown): Promise<void> {
  const records = Array.isArray(stored) ? stored : stored === null || stored === undefined ? [] : [stored]
  const core = coreOf(context.app)
  const entry = context.params.provider ? core.registry.get(context.path) : undefined
  let external: unknown[] = records
  if (entry) {
    const hidden = core.pipeline.hiddenFields(entry)
    const { result, external: perCaller } = core.pipeline.eventResolvers(entry)
    const event = EVENTS[context.method] ?? context.method
    const connection = context.params.connection
    external = await Promise.all(
      records.map(async (record) => {
        const data = await runResolvers(result, withoutFields(record, hidden), () =>
          eventContext(context.app, entry, event, record)
        )
        return runResolvers(perCaller, data, () => eventContext(context.app, entry, event, data, connection))
      })
    )
  }
  const single = context.method === 'create' ? !Array.isArray(context.data) : context.id !== null
  context.event = null
  context.result = context.dispatch = single ? external[0] : external
  if (context.method === 'create') context.http.status = 201
}

/** The key the call carries (header or query), checked; undefined when none. */
function keyOf(params: Params): string | undefined {
  const query = params.query
  const inQuery = query?.[QUERY_KEY]
  const header = params.provider === 'rest' ? params.headers?.[HEADER] : undefined
  if (inQuery === undefined) return header === undefined ? undefined : parseIdempotencyKey(header)
  delete query![QUERY_KEY]
  const key = parseIdempotencyKey(inQuery, QUERY_KEY)
  if (header !== undefined && parseIdempotencyKey(header) !== key)
    throw new BadRequest(`The Idempotency-Key header and ${QUERY_KEY} name different keys`)
  return key
}

function keyedWrite(context: HookContext, key: string, target: KeyedWrites, settings: IdempotencySettings): KeyedWrite {
  const { path, method } = context
  const request = canonical([context.id ?? null, context.data ?? null, context.params.query ?? {}])
  return {
    // Read when the store writes: the authentication hooks have put the caller on the (new) params by then.
    scoped: () => `${callerOf(context.params)}\n${path}\n${method}\n${key}`,
    fingerprint: settings.digest(request),
    target,
    retentionMs: settings.retentionMs,
    waitMs: settings.waitMs
  }
}

/** Who the call is from: the authenticated entity's id, else the token's subject, else anonymous. */
function callerOf(params: Params): string {
  const user = params.user
  const id = user?.id ?? user?._id
  if (id !== undefined && id !== null) return `user:${String(id)}`
  const payload = (params.authentication as { payload?: { sub?: unknown } } | undefined)?.payload
  if (payload?.sub !== undefined) return `sub:${String(payload.sub)}`
  return 'anonymous'
}

/** JSON with object keys in order, so that one request always has one digest whatever its key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const object = value as Record<string, unknown>
    const keys = Object.keys(object)
      .filter((key) => object[key] !== undefined)
      .sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(object[key])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}
