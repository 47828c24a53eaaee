import { EVENT_RESOLVER, type EventResolverMark } from '../event-stages.js'
import type { HookContext } from '../hook-context.js'
import { declaredIdField } from '../id-field.js'
import type { ResolverStatus } from './resolver.js'

/*
 * The hooks that apply resolvers to a call, as `@feathersjs/schema` names them. Each is an around hook
 * (`hooks({ around: { all: [resolveResult(messageResolver)] } })`); resolveData and resolveQuery also work as
 * before hooks. Resolvers run in order, each on the previous one's output.
 */

/** A hook usable as an around hook, and (where it makes sense) as a before hook. */
export type ResolverHook = (context: HookContext, next?: () => Promise<void>) => Promise<void>

/** Any resolver the hooks may run (resolvers of any record type: the hook passes each its records). */
interface AnyResolver {
  readonly virtualNames: readonly string[]
  resolveAll(records: readonly never[], context: HookContext, status?: Partial<ResolverStatus>): Promise<unknown[]>
}

/** One value resolved by each resolver in turn (Resolver.resolve passes what is not a record unchanged). */
async function run(
  resolvers: readonly AnyResolver[],
  data: unknown,
  context: HookContext,
  status?: Partial<ResolverStatus>
): Promise<unknown> {
  return (await runAll(resolvers, [data], context, status))[0]
}

/** Records resolved as a batch (Resolver.resolveAll), by each resolver in turn; items that are not records pass. */
async function runAll(
  resolvers: readonly AnyResolver[],
  records: readonly unknown[],
  context: HookContext,
  status?: Partial<ResolverStatus>
): Promise<unknown[]> {
  if (resolvers.length === 1) return resolvers[0]!.resolveAll(records as never[], context, status)
  let current = records
  for (const resolver of resolvers) current = await resolver.resolveAll(current as never[], context, status)
  return current as unknown[]
}

/** Each record of a value (an array's items, a find page's `data`, or the value itself), resolved as one batch. */
async function eachRecord(
  value: unknown,
  resolvers: readonly AnyResolver[],
  context: HookContext,
  status?: Partial<ResolverStatus>
): Promise<unknown> {
  if (Array.isArray(value)) return runAll(resolvers, value, context, status)
  const page = value as { data?: unknown } | null
  if (typeof page === 'object' && page !== null && Array.isArray(page.data))
    return { ...page, data: await runAll(resolvers, page.data, context, status) }
  return isRecord(value) ? run(resolvers, value, context, status) : value
}

/** The data of create (one record or an array), update and patch, resolved before the method runs. */
export function resolveData(...resolvers: AnyResolver[]): ResolverHook {
  return async (context, next) => {
    if (context.data !== undefined) {
      const status = { originalContext: context }
      const { data } = context
      context.data = Array.isArray(data)
        ? await runAll(resolvers, data, context, status)
        : await run(resolvers, data, context, status)
    }
    if (next) await next()
  }
}

/** `params.query`, resolved before the method runs (e.g. a user may only find their own records). */
export function resolveQuery(...resolvers: AnyResolver[]): ResolverHook {
  return async (context, next) => {
    const query = await run(resolvers, context.params.query ?? {}, context)
    context.params = { ...context.params, query: query as Record<string, unknown> }
    if (next) await next()
  }
}

/** The property names a call asked for (`$resolve`, else `$select`), taken out of the query the store sees. */
function selection(context: HookContext, virtualNames: ReadonlySet<string>): readonly string[] | undefined {
  const query = context.params.query
  if (!query || (query.$resolve === undefined && query.$select === undefined)) return undefined
  const { $resolve, $select, ...rest } = query
  // A $select naming a virtual property cannot go to the store: the store returns whole records instead.
  const selectsVirtual = Array.isArray($select) && $select.some((name) => virtualNames.has(String(name)))
  context.params = { ...context.params, query: $select && !selectsVirtual ? { ...rest, $select } : rest }
  if (Array.isArray($resolve)) return $resolve.map(String)
  // The id stays with a $select, as the store keeps it.
  if (!Array.isArray($select)) return undefined
  const idField = declaredIdField(context.service) ?? 'id'
  return [...new Set([idField, ...$select.map(String)])]
}

/** A hook marked for the kernel (event-stages.ts): it resolves the events a live store publishes too. */
export type MarkedResolverHook = ResolverHook & { readonly [EVENT_RESOLVER]: EventResolverMark }

/** The kernel's mark: one published record resolved with the event's context (no call, no `$select`). */
function eventMark(stage: EventResolverMark['stage'], resolvers: readonly AnyResolver[]): EventResolverMark {
  return {
    stage,
    resolve: (record, context) =>
      isRecord(record) ? run(resolvers, record, context, { originalContext: context }) : Promise.resolve(record)
  }
}

/**
 * The result (one record, an array, or a find page's `data`) resolved after the method and the after hooks.
 * `$select` or `$resolve` in the query narrow what is resolved and returned. When an after hook (`protect`)
 * set `context.dispatch`, that is resolved too: external callers then get the resolved properties without the
 * protected ones (the per-call loader answers the second pass from its cache). A live store's events, which
 * pass through no hook, are resolved by the kernel with the hook's mark: once per event, as the server sees it.
 */
export function resolveResult(...resolvers: AnyResolver[]): MarkedResolverHook {
  const virtualNames = new Set(resolvers.flatMap((resolver) => resolver.virtualNames))
  const hook = async (context: HookContext, next?: () => Promise<void>) => {
    if (!next) throw new Error('The resolveResult hook must be used as an around hook')
    const properties = selection(context, virtualNames)
    const status = { originalContext: context, ...(properties ? { properties } : {}) }
    await next()
    if (context.result !== undefined) context.result = await eachRecord(context.result, resolvers, context, status)
    if (context.dispatch !== undefined)
      context.dispatch = await eachRecord(context.dispatch, resolvers, context, status)
  }
  return Object.assign(hook, { [EVENT_RESOLVER]: eventMark('result', resolvers) })
}

/**
 * What leaves the server, resolved after everything else: sets `context.dispatch`, which transports send and
 * events carry, from `context.dispatch ?? context.result` (so it composes with `protect`, in either order).
 * Like `protect`, it sets the dispatch for every call — an internal call's events reach clients too — and
 * replaces `context.result` only for external calls: internal callers keep the unresolved record. Events are
 * resolved again by the kernel with the hook's mark, once per delivery, as its first recipient would see them.
 */
export function resolveExternal(...resolvers: AnyResolver[]): MarkedResolverHook {
  const hook = async (context: HookContext, next?: () => Promise<void>) => {
    if (!next) throw new Error('The resolveExternal hook must be used as an around hook')
    await next()
    const source = context.dispatch ?? context.result
    if (source === undefined || source === null) return
    const status = { originalContext: context }
    context.dispatch = await eachRecord(source, resolvers, context, status)
    if (context.params.provider !== undefined) context.result = context.dispatch
  }
  return Object.assign(hook, { [EVENT_RESOLVER]: eventMark('external', resolvers) })
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
