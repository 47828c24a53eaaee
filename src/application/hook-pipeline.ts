import { BadRequest, MethodNotAllowed } from '../domain/errors/errors.js'
import { layoutOf } from '../domain/service/method-layout.js'
import { MAX_NESTING_DEPTH, nestedDeeperThan } from '../domain/service/nesting-depth.js'
import type { ServiceCall } from '../domain/service/service.js'
import type { AroundHook, HookApp, HookContext, HookMap } from './hook-context.js'
import { HookRegistry, combineChains, type HookChain } from './hook-registry.js'
import { collectEventResolvers, type EventResolvers } from './event-stages.js'
import { collectSetupSteps, type HookSetup } from './hook-setup.js'
import { PROTECTED_FIELDS } from './protected-fields.js'
import type { ServiceEntry } from './service-entry.js'

/**
 * The hook pipeline: app hooks wrap service hooks; each call runs around → before → method (skipped
 * when a before hook set `result`) → after, and the error hooks on failure. It also collects the
 * fields `protect(...)` hooks hide, which the app strips from events stores publish by themselves, and
 * the setup steps hooks carry (hook-setup.ts), which the app runs when it sets services up.
 */
export class HookPipeline {
  private readonly appHooks = new HookRegistry()
  /** Fields hidden by app-level `protect(...)` hooks. */
  readonly appProtected = new Set<string>()
  /** Setup steps of app-level hooks: run for every service. */
  private readonly appSetup = new Set<HookSetup>()
  /** Event resolvers of app-level hooks: run on every live service's events, after the service's own. */
  private readonly appResolvers: EventResolvers = { result: [], external: [] }

  constructor(
    private readonly app: HookApp,
    private readonly entries: () => Iterable<ServiceEntry>
  ) {}

  /** App-level hooks: they wrap every service's hooks. */
  addAppHooks(map: HookMap | AroundHook[]): void {
    this.appHooks.add(map)
    collectMarks(map, this.appProtected, this.appSetup, this.appResolvers)
    for (const entry of this.entries()) entry.chains.clear()
  }

  addServiceHooks(entry: ServiceEntry, map: HookMap | AroundHook[]): void {
    entry.hooks.add(map)
    collectMarks(map, entry.protectedFields, entry.setupSteps, entry.eventResolvers)
    entry.chains.clear()
  }

  /** Every hook of one method, app-level included, in the order they run (cached per method). */
  chainFor(entry: ServiceEntry, method: string): HookChain {
    let chain = entry.chains.get(method)
    if (!chain) {
      chain = combineChains(this.appHooks.forMethod(method), entry.hooks.forMethod(method))
      entry.chains.set(method, chain)
    }
    return chain
  }

  /** The distinct setup steps of this service's hooks, app-level ones first. */
  setupSteps(entry: ServiceEntry): HookSetup[] {
    return [...new Set([...this.appSetup, ...entry.setupSteps])]
  }

  /** Fields hidden from this service's external callers and published events. */
  hiddenFields(entry: ServiceEntry): ReadonlySet<string> {
    if (entry.protectedFields.size === 0) return this.appProtected
    return new Set([...this.appProtected, ...entry.protectedFields])
  }

  /** The resolvers of this service's events, by stage: the service's own, then the app's (as hooks nest). */
  eventResolvers(entry: ServiceEntry): EventResolvers {
    const app = this.appResolvers
    if (app.result.length === 0 && app.external.length === 0) return entry.eventResolvers
    return {
      result: [...entry.eventResolvers.result, ...app.result],
      external: [...entry.eventResolvers.external, ...app.external]
    }
  }

  /**
   * Runs one call and returns its context. External calls (`params.provider` set) may only use the
   * service's exposed methods; malformed data and over-deep queries are a 400 before any hook runs
   * (hooks walk queries recursively too, e.g. forbidQueryOn).
   */
  run(entry: ServiceEntry, call: ServiceCall): Promise<HookContext> {
    let context: HookContext
    try {
      context = this.contextFor(entry, call)
    } catch (error) {
      return Promise.reject(error)
    }
    const chain = this.chainFor(entry, context.method)
    if (chain.around.length === 0) return runHooksAndMethod(entry, chain, context)
    return runAround(chain.around, 0, context, async () => {
      await runHooksAndMethod(entry, chain, context)
    }).then(() => context)
  }

  private contextFor(entry: ServiceEntry, call: ServiceCall): HookContext {
    const { method, id, data, params } = call
    if (params.provider !== undefined && !entry.methods.includes(method)) {
      throw new MethodNotAllowed(`Method \`${method}\` is not supported by this endpoint.`)
    }
    validateData(method, data)
    if (nestedDeeperThan(params.query))
      throw new BadRequest(`The query may be nested at most ${MAX_NESTING_DEPTH} levels deep`)
    return {
      app: this.app,
      service: entry.handle,
      path: entry.path,
      method,
      type: 'before',
      id,
      data,
      params,
      event: layoutOf(method).event ?? null,
      http: {}
    }
  }
}

/**
 * before → method → after (error hooks on failure); resolves with the context. A hook that returns
 * no promise (most are synchronous: validation, protect, stamps) is not awaited: an `await` per hook
 * is a turn of the microtask queue on every call. Without after and error hooks (the common chain)
 * no async function runs at all: the synchronous before hooks, then one `then` on the method's promise.
 */
function runHooksAndMethod(entry: ServiceEntry, chain: HookChain, context: HookContext): Promise<HookContext> {
  if (chain.after.length > 0 || chain.error.length > 0) return runChain(entry, chain, context, 0)
  try {
    const { before } = chain
    for (let index = 0; index < before.length; index++) {
      context.type = 'before'
      const pending = before[index]!(context)
      if (isThenable(pending)) return runChain(entry, chain, context, index + 1, pending)
    }
    if (context.result !== undefined) return Promise.resolve(context)
    return Promise.resolve(callMethod(entry, context)).then(
      (result) => {
        context.result = result
        return context
      },
      (error: unknown) => failed(context, error)
    )
  } catch (error) {
    context.error = error
    return Promise.reject(error)
  }
}

/** A failure with no error hooks to recover it: recorded on the context, as the full chain records it, and rethrown. */
function failed(context: HookContext, error: unknown): never {
  context.error = error
  throw error
}

/** The general chain, from before hook `start` on, after `pending` (the promise the hook before it returned). */
async function runChain(
  entry: ServiceEntry,
  chain: HookChain,
  context: HookContext,
  start: number,
  pending?: PromiseLike<unknown>
): Promise<HookContext> {
  try {
    if (pending) await pending
    for (let index = start; index < chain.before.length; index++) {
      context.type = 'before'
      const returned = chain.before[index]!(context)
      if (isThenable(returned)) await returned
    }
    if (context.result === undefined) context.result = await callMethod(entry, context)
    for (const hook of chain.after) {
      context.type = 'after'
      const returned = hook(context)
      if (isThenable(returned)) await returned
    }
  } catch (error) {
    context.error = error
    const before = context.result
    for (const hook of chain.error) {
      context.type = 'error'
      try {
        await hook(context)
      } catch (replaced) {
        context.error = replaced
      }
    }
    const recovered = context.result !== before || context.error === undefined
    if (!recovered) throw context.error
    context.error = undefined
  }
  return context
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function'
}

/** Calls the service's own method with the handle as `this`, its arguments laid out by method-layout. */
function callMethod(entry: ServiceEntry, context: HookContext): unknown {
  const method = (entry.service as Record<string, (...args: unknown[]) => Promise<unknown>>)[context.method]!
  const { id, data, params } = context
  // The arguments as method-layout lays them out, passed as they are: no array or parts object per call.
  const layout = layoutOf(context.method)
  if (layout.id)
    return layout.data ? method.call(entry.handle, id, data, params) : method.call(entry.handle, id, params)
  return layout.data ? method.call(entry.handle, data, params) : method.call(entry.handle, params)
}

function runAround(
  hooks: AroundHook[],
  index: number,
  context: HookContext,
  inner: () => Promise<void>
): Promise<void> {
  if (index === hooks.length) return inner()
  context.type = 'around'
  return hooks[index]!(context, () => runAround(hooks, index + 1, context, inner))
}

/** Malformed data is a 400 before any hook or method runs (docs/wire-protocol.md, Service calls). */
function validateData(method: string, data: unknown): void {
  if (nestedDeeperThan(data)) throw new BadRequest(`Data may be nested at most ${MAX_NESTING_DEPTH} levels deep`)
  if (method === 'create' && (typeof data !== 'object' || data === null)) {
    throw new BadRequest("First parameter for 'create' must be an object")
  }
  if (
    (method === 'update' || method === 'patch') &&
    (typeof data !== 'object' || data === null || Array.isArray(data))
  ) {
    throw new BadRequest('No data provided')
  }
}

function collectMarks(
  map: HookMap | AroundHook[],
  into: Set<string>,
  steps: Set<HookSetup>,
  resolvers: EventResolvers
): void {
  const groups = Array.isArray(map) ? [map] : Object.values(map).flatMap((byMethod) => Object.values(byMethod ?? {}))
  for (const hooks of groups) {
    collectSetupSteps(hooks, steps)
    collectEventResolvers(hooks, resolvers)
    for (const hook of [hooks].flat()) {
      const fields = (hook as { [PROTECTED_FIELDS]?: string[] } | undefined)?.[PROTECTED_FIELDS]
      if (fields) for (const field of fields) into.add(field)
    }
  }
}
