import type { JsonSchema, SchemaIssue } from './json-schema.js'

/**
 * Checks a value against a compiled schema. It may normalise the value in place (string
 * `transform`s, `default`s); it returns every failing rule at once, or an empty list.
 */
export type Validate = (value: unknown) => SchemaIssue[]

/** The validation port: compiles a schema once into a `Validate` function (the Ajv adapter in production). */
export interface SchemaValidator {
  compile(schema: JsonSchema): Validate
}
export const SchemaValidator = Symbol.for('SchemaValidator')
