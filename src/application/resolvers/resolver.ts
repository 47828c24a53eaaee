import { BadRequest, FeathersError } from '../../domain/errors/errors.js'
import type { HookContext } from '../hook-context.js'

/*
 * Resolvers as Feathers v5 (`@feathersjs/schema`) writes them: one async function per property, given the
 * property's value, the whole record, the call's context and a status; what it returns becomes the
 * property's value, `undefined` removes the property. `virtual(...)` computes a property the record does
 * not store. The hooks that apply resolvers to a call are in hooks.ts.
 */

/** Where a resolver runs: the property path from the top record, and the resolvers already on the way there. */
export interface ResolverStatus<Ctx = HookContext> {
  path: string[]
  /** The context of the call that started resolving (nested resolvers may see another one). */
  originalContext?: Ctx
  /** Only these properties are resolved and kept (a `$select` or `$resolve` of the call). */
  properties?: readonly string[]
  stack: unknown[]
}

const IS_VIRTUAL = Symbol.for('plumage.virtualResolver')

/** Computes one property: `undefined` leaves it out of the result. */
export type PropertyResolver<T, V, Ctx = HookContext> = ((
  value: V | undefined,
  record: T,
  context: Ctx,
  status: ResolverStatus<Ctx>
) => Promise<V | undefined>) & { [IS_VIRTUAL]?: true }

/** A property the record does not store: computed from the record alone. */
export type VirtualResolver<T, V, Ctx = HookContext> = (
  record: T,
  context: Ctx,
  status: ResolverStatus<Ctx>
) => Promise<V | undefined>

/**
 * One resolver per declared property of `T`. An open record type (a schema with `additionalProperties`) has an
 * index signature: its declared properties are the ones resolvers are typed for.
 */
export type PropertyResolverMap<T, Ctx = HookContext> = {
  [K in keyof T as string extends K ? never : number extends K ? never : K]?: PropertyResolver<T, T[K], Ctx>
}

/** Marks a resolver virtual: a stored value is ignored, and a `$select` of it is not sent to the store. */
export function virtual<T, V, Ctx = HookContext>(resolver: VirtualResolver<T, V, Ctx>): PropertyResolver<T, V, Ctx> {
  const property: PropertyResolver<T, V, Ctx> = (_value, record, context, status) => resolver(record, context, status)
  property[IS_VIRTUAL] = true
  return property
}

/** A set of property resolvers for records of type `T`; `resolve(record, context)` applies them. */
export class Resolver<T, Ctx = HookContext> {
  /** Only for type inference (`typeof resolver._type`); never set. */
  declare readonly _type: T
  readonly propertyNames: string[]
  /** The properties computed by `virtual(...)`: resolveResult keeps them out of the store's `$select`. */
  readonly virtualNames: string[]

  constructor(readonly properties: PropertyResolverMap<T, Ctx>) {
    this.propertyNames = Object.keys(properties)
    this.virtualNames = this.propertyNames.filter((name) => resolverOf(this, name)?.[IS_VIRTUAL] === true)
  }

  /**
   * A new record: every property of `data` and every resolved one (`status.properties` narrows both), the
   * resolvers run concurrently. A property whose resolver is already on the stack (a resolver that resolves
   * itself through another record) is left out instead of looping. Failures are one 400 naming each property, as
   * Feathers' are — but a server-side failure (a 5xx: a store's 503 while it is unavailable) is thrown as it is.
   */
  async resolve(data: T, context: Ctx, status: Partial<ResolverStatus<Ctx>> = {}): Promise<T> {
    if (typeof data !== 'object' || data === null || this.propertyNames.length === 0) return data
    return (await this.resolveAll([data], context, status))[0]!
  }

  /**
   * Each of `records` resolved as `resolve` would, in one pass: the property resolvers of all records are started
   * first and awaited together, and each property's status is made once for the batch, not once per record — a
   * page of 25 records costs one await, not 25 chains of them. Items that are not records pass unchanged. A failure
   * is the 400 of the first failing record, as the records' own `resolve` would have thrown.
   */
  async resolveAll(records: readonly T[], context: Ctx, status: Partial<ResolverStatus<Ctx>> = {}): Promise<T[]> {
    if (this.propertyNames.length === 0) return [...records]
    const { properties, path = [], stack = [], originalContext } = status
    // Each property once for the batch: copied (selected, no resolver), dropped (its resolver is on the stack), or
    // resolved, with the same status for every record (resolvers only read it).
    const copied: string[] = []
    const dropped: string[] = []
    const resolved: { name: string; resolver: PropertyResolver<T, unknown, Ctx>; own: ResolverStatus<Ctx> }[] = []
    for (const name of properties ?? this.propertyNames) {
      const resolver = resolverOf(this, name)
      if (!resolver) copied.push(name)
      else if (stack.includes(resolver)) dropped.push(name)
      else
        resolved.push({
          name,
          resolver,
          own: { originalContext, properties, path: [...path, name], stack: [...stack, resolver] }
        })
    }
    const width = resolved.length
    const results: unknown[] = new Array(records.length)
    const answers: unknown[] = new Array(records.length * width)
    for (let index = 0; index < records.length; index++) {
      const record = records[index] as Record<string, unknown>
      if (typeof record !== 'object' || record === null || Array.isArray(record)) {
        results[index] = record
        continue
      }
      // Without a selection the record is copied whole (one clone of its shape, cheaper than a property at a time)
      // and the resolved properties are written over it; with one, only the selected properties are taken.
      const result: Record<string, unknown> = properties ? {} : { ...record }
      for (const name of copied) if (record[name] !== undefined) result[name] = record[name]
      for (const name of dropped) if (Object.hasOwn(result, name)) delete result[name]
      for (let step = 0; step < width; step++) {
        const { name, resolver, own } = resolved[step]!
        try {
          answers[index * width + step] = resolver(record[name], records[index]!, context, own)
        } catch (error) {
          answers[index * width + step] = new Failure(error)
        }
      }
      results[index] = result
    }
    // A failure: wait for every resolver, to name each failed property of the first failing record.
    const settled = width === 0 ? [] : await Promise.all(answers).catch(() => Promise.all(answers.map(caught)))
    for (let index = 0; index < records.length && width > 0; index++) {
      const result = results[index] as Record<string, unknown>
      if (result === records[index]) continue
      let errors: Record<string, unknown> | undefined
      for (let step = 0; step < width; step++) {
        const { name } = resolved[step]!
        const answer = settled[index * width + step]
        if (answer instanceof Failure) {
          // The server's own failure (a store unavailable: 503) is not the caller's: it keeps its status.
          if (answer.error instanceof FeathersError && answer.error.code >= 500) throw answer.error
          ;(errors ??= {})[name] = describeError(answer.error)
        } else if (answer !== undefined) result[name] = answer
        else if (Object.hasOwn(result, name)) delete result[name]
      }
      if (errors) throw new BadRequest('Error resolving data', errors)
    }
    return results as T[]
  }
}

/**
 * Resolvers for records of type `T` (usually `SchemaType` of the service's result schema), in a hook context
 * `Ctx`: `resolve<Message>({ user: virtual(async (message, context) => ...) })`.
 */
export function resolve<T, Ctx = HookContext>(properties: PropertyResolverMap<T, Ctx>): Resolver<T, Ctx> {
  return new Resolver<T, Ctx>(properties)
}

function resolverOf<T, Ctx>(resolver: Resolver<T, Ctx>, name: string): PropertyResolver<T, unknown, Ctx> | undefined {
  return Object.hasOwn(resolver.properties, name)
    ? (resolver.properties as Record<string, PropertyResolver<T, unknown, Ctx> | undefined>)[name]
    : undefined
}

/** A resolver's failure, told apart from its answers once all have settled. */
class Failure {
  constructor(readonly error: unknown) {}
}

/** An answer, or its failure as a Failure: Promise.all then waits for every resolver. */
async function caught(answer: unknown): Promise<unknown> {
  try {
    return await answer
  } catch (error) {
    return new Failure(error)
  }
}

/** An error as the 400's `errors` carry it: a Feathers error's JSON, else its message. */
function describeError(error: unknown): unknown {
  const json = (error as { toJSON?: () => unknown } | null)?.toJSON
  if (typeof json === 'function') return json.call(error)
  return { message: error instanceof Error ? error.message : String(error) }
}
