import { BadRequest } from '../../domain/errors/errors.js'
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
   * itself through another record) is left out instead of looping. Failures are one 400 naming each property.
   * Plain properties are copied as they are, without a promise each: a page of records has many of them.
   */
  async resolve(data: T, context: Ctx, status: Partial<ResolverStatus<Ctx>> = {}): Promise<T> {
    if (typeof data !== 'object' || data === null || this.propertyNames.length === 0) return data
    const record = data as Record<string, unknown>
    const { properties } = status
    // Without a selection the record is copied whole (one clone of its shape, cheaper than a property at a time)
    // and the resolved properties are written over it; with one, only the selected properties are taken.
    const result: Record<string, unknown> = properties ? {} : { ...record }
    // The resolved properties' names and answers, in order: one promise each, no closure each.
    const resolving: string[] = []
    const answers: unknown[] = []
    for (const name of properties ?? this.propertyNames) {
      const resolver = resolverOf(this, name)
      if (!resolver) {
        if (record[name] !== undefined) result[name] = record[name]
        continue
      }
      const { path = [], stack = [], originalContext } = status
      if (stack.includes(resolver)) {
        if (Object.hasOwn(result, name)) delete result[name]
        continue
      }
      resolving.push(name)
      // Written out, not `{ ...status }`: V8's object spread of a small object cost 2.5 µs per record here.
      const own = { originalContext, properties, path: [...path, name], stack: [...stack, resolver] }
      try {
        answers.push(resolver(record[name], data, context, own))
      } catch (error) {
        answers.push(new Failure(error))
      }
    }
    if (resolving.length === 0) return result as T
    if (resolving.length === 1) {
      // One resolved property (the common case) is awaited as it is: a promise less per record.
      const [name] = resolving as [string]
      let answer: unknown
      try {
        answer = await answers[0]
      } catch (error) {
        answer = new Failure(error)
      }
      if (answer instanceof Failure)
        throw new BadRequest('Error resolving data', { [name]: describeError(answer.error) })
      if (answer !== undefined) result[name] = answer
      else if (Object.hasOwn(result, name)) delete result[name]
      return result as T
    }
    const settled = await Promise.all(answers.map(caught))
    let errors: Record<string, unknown> | undefined
    for (let index = 0; index < resolving.length; index++) {
      const answer = settled[index]
      if (answer instanceof Failure) (errors ??= {})[resolving[index]!] = describeError(answer.error)
      else if (answer !== undefined) result[resolving[index]!] = answer
      else if (Object.hasOwn(result, resolving[index]!)) delete result[resolving[index]!]
    }
    if (errors) throw new BadRequest('Error resolving data', errors)
    return result as T
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
