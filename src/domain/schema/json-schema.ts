/**
 * JSON Schema (2020-12, the dialect of OpenAPI 3.1) held as plain data, so services can declare
 * their shapes without the domain importing a validator. Only the keywords plumage itself reads are
 * typed; every other keyword passes through to the validator and to the OpenAPI document.
 */
export type JsonSchema = boolean | JsonSchemaObject

export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array'

export interface JsonSchemaObject {
  type?: JsonType | readonly JsonType[]
  format?: string
  properties?: Readonly<Record<string, JsonSchema>>
  required?: readonly string[]
  additionalProperties?: JsonSchema
  items?: JsonSchema
  anyOf?: readonly JsonSchema[]
  oneOf?: readonly JsonSchema[]
  enum?: readonly unknown[]
  description?: string
  /**
   * String normalisations applied before validation, in order ('trim', 'toLowerCase',
   * 'toUpperCase'), as in ajv-keywords' `transform`. Query values are normalised the same way,
   * so `?email=Ann@X.io` finds the record stored as `ann@x.io`.
   */
  transform?: readonly StringTransform[]
  readonly [keyword: string]: unknown
}

export type StringTransform = 'trim' | 'toLowerCase' | 'toUpperCase'

/**
 * What a service declares about its records. All optional; each is plain JSON Schema.
 *
 * - `result`: one record as the service returns it (the TypeScript type of the records derives from it).
 * - `data`: the body of create and update. A property declared `false` is server-owned: external
 *   callers may not send it (mass assignment); internal calls may, as `result` declares it.
 * - `patch`: the body of patch (default: `data` without `required`).
 * - `query`: the fields that may be queried, with their types; REST query strings are coerced to
 *   them. `additionalProperties: false` refuses other fields; otherwise they are queried as sent.
 */
export interface ServiceSchemas {
  result?: JsonSchemaObject
  data?: JsonSchemaObject
  patch?: JsonSchemaObject
  query?: JsonSchemaObject
}

/** One failing rule: the field (dotted path, '' for the whole value), the JSON Schema keyword, a sentence. */
export interface SchemaIssue {
  field: string
  rule: string
  message: string
}
