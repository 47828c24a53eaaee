import type { JsonSchema, JsonSchemaObject, ServiceSchemas } from '../../domain/schema/json-schema.js'
import type { SchemaValidator, Validate } from '../../domain/schema/schema-validator.js'

/** A body validator for external callers, and one for internal calls (server-owned fields allowed). */
export interface BodyValidators {
  external: Validate
  internal: Validate
}

/** A service's schemas, compiled once when the service is registered. */
export interface CompiledSchemas {
  readonly schemas: ServiceSchemas
  readonly data?: BodyValidators
  readonly patch?: BodyValidators
  readonly query?: JsonSchemaObject
}

/**
 * Compiles `data` and `patch` (default: `data` without `required`) with the validator. A top-level
 * property declared `false` is server-owned: refused from external callers; internal calls are
 * checked against the property as `result` declares it (or anything, when it does not).
 */
export function compileSchemas(schemas: ServiceSchemas, validator?: SchemaValidator): CompiledSchemas {
  const patch = schemas.patch ?? (schemas.data ? patchSchemaOf(schemas.data) : undefined)
  if ((schemas.data || patch) && !validator) {
    throw new Error('Services with data schemas need a SchemaValidator: create the app with new App({ validator })')
  }
  const body = (schema: JsonSchemaObject): BodyValidators => ({
    external: validator!.compile(schema),
    internal: validator!.compile(internalVariant(schema, schemas.result))
  })
  return {
    schemas: { ...schemas, ...(patch ? { patch } : {}) },
    ...(schemas.data ? { data: body(schemas.data) } : {}),
    ...(patch ? { patch: body(patch) } : {}),
    ...(schemas.query ? { query: schemas.query } : {})
  }
}

/** The data schema for patch: the same properties, none required. */
function patchSchemaOf(data: JsonSchemaObject): JsonSchemaObject {
  const { required: _required, $id: _id, ...rest } = data
  return rest
}

/** Names of the top-level properties a schema declares `false` (server-owned). */
function serverOwnedFields(schema: JsonSchemaObject | undefined): string[] {
  return Object.entries(schema?.properties ?? {})
    .filter(([, property]) => property === false)
    .map(([name]) => name)
}

function internalVariant(schema: JsonSchemaObject, result: JsonSchemaObject | undefined): JsonSchemaObject {
  const owned = serverOwnedFields(schema)
  if (owned.length === 0) return schema
  const properties: Record<string, JsonSchema> = { ...schema.properties }
  for (const name of owned) properties[name] = result?.properties?.[name] ?? true
  // A second schema with the same $id would clash in the validator's registry.
  const { $id: _id, ...rest } = schema
  return { ...rest, properties }
}
