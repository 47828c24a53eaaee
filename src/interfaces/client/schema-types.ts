import type { ServiceSchemas } from '../../domain/schema/json-schema.js'
import type { SchemaType } from '../../domain/schema/schema-type.js'
import type { ServiceTypes } from './typed-service.js'

/** The TypeScript type one schema describes, or `Fallback` when the service declares none. */
type Typed<Schema, Fallback> = [Schema] extends [undefined] ? Fallback : SchemaType<Schema>

/** The schema a service declares under `K`; undefined (never a schema) when it declares none. */
type Declared<Schemas, K extends keyof ServiceSchemas> = Schemas extends { [Key in K]: infer Schema }
  ? Schema
  : undefined

/**
 * A service's ServiceTypes from the schemas it is registered with (`app.use(path, service, { schemas })`,
 * declared `as const` or `satisfies ServiceSchemas`): the client's data, query and results are the
 * server's, through SchemaType (src/domain/schema/schema-type.ts) like the server's own record types, with no
 * generated code.
 * `Extra` adds what schemas do not say: `paginate`, custom `methods` and `events` (see ServiceTypes).
 *
 * ```ts
 * type Services = { todos: SchemaTypes<typeof todoSchemas, { paginate: true }> }
 * const client = createClient<Services>()
 * ```
 *
 * Each schema is converted once per service, where the client's type is declared.
 */
export type SchemaTypes<Schemas extends ServiceSchemas, Extra extends Omit<ServiceTypes, 'result'> = object> = {
  result: Typed<Declared<Schemas, 'result'>, Record<string, unknown>>
  data: Typed<Declared<Schemas, 'data'>, Partial<Typed<Declared<Schemas, 'result'>, Record<string, unknown>>>>
  patch: Typed<Declared<Schemas, 'patch'>, Partial<Typed<Declared<Schemas, 'data'>, Record<string, unknown>>>>
  query: Typed<Declared<Schemas, 'query'>, Typed<Declared<Schemas, 'result'>, Record<string, unknown>>>
} & Extra
