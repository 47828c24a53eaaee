import { createRequire } from 'node:module'
import { injectable } from 'inversify'
import type { ErrorObject, Options, ValidateFunction } from 'ajv'
import type { Ajv2020 as Ajv2020Type } from 'ajv/dist/2020.js'
import type { JsonSchema, SchemaIssue } from '../../domain/schema/json-schema.js'
import type { SchemaValidator, Validate } from '../../domain/schema/schema-validator.js'
import { describeField } from '../../domain/schema/validation-error.js'

// CommonJS packages: their module.exports is the class/plugin (the ESM `default` interop differs by tool).
const require = createRequire(import.meta.url)

/**
 * A configured Ajv, loaded and built at the first validation: Ajv, its formats and its 2020-12 meta-schemas are
 * ~90 modules and the largest piece of startup CPU and idle memory of a server that has not validated a body yet.
 */
function createAjv(options: Options): Ajv2020Type {
  const Ajv2020 = require('ajv/dist/2020.js') as typeof Ajv2020Type
  const addFormats = require('ajv-formats') as (ajv: Ajv2020Type) => Ajv2020Type
  // Only the one keyword used: the package's entry point loads all of its ~35 keyword modules.
  const addTransform = require('ajv-keywords/dist/keywords/transform') as (ajv: Ajv2020Type) => Ajv2020Type
  const ajv = new Ajv2020({ allErrors: true, useDefaults: true, allowUnionTypes: true, strict: true, ...options })
  addFormats(ajv)
  addTransform(ajv)
  return ajv
}

/**
 * The validation port on Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1) with ajv-formats
 * (email, date-time, uuid…) and ajv-keywords' `transform` (trim, toLowerCase…). Every error is
 * collected (`allErrors`), `default`s are filled in, types are never coerced (a JSON body keeps its
 * types; queries are coerced by the domain's coerceQuery, which knows REST strings from JSON).
 * Each schema object is compiled once, when it first validates a value (services get their
 * validators when registered, most are first used much later, some never): a schema Ajv refuses
 * fails that validation, and every later one, with Ajv's error.
 */
@injectable()
export class AjvSchemaValidator implements SchemaValidator {
  private ajv?: Ajv2020Type
  private readonly compiled = new WeakMap<object, Validate>()

  constructor(private readonly options: Options = {}) {}

  compile(schema: JsonSchema): Validate {
    if (typeof schema === 'boolean') return this.build(schema)
    let validate = this.compiled.get(schema)
    if (!validate) this.compiled.set(schema, (validate = this.build(schema)))
    return validate
  }

  private build(schema: JsonSchema): Validate {
    let check: ValidateFunction | undefined
    return (value) => {
      check ??= (this.ajv ??= createAjv(this.options)).compile(schema as object)
      return check(value) ? [] : (check.errors ?? []).map(toIssue)
    }
  }
}

/** One Ajv error as `{ field, rule, message }`, the message naming the field and the rule. */
export function toIssue(error: ErrorObject): SchemaIssue {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
  const params = error.params as Record<string, unknown>
  const at = (child: unknown) => [...path, String(child)].join('.')
  const field = path.join('.')
  switch (error.keyword) {
    case 'required':
      return {
        field: at(params.missingProperty),
        rule: 'required',
        message: `${describeField(at(params.missingProperty))} is required`
      }
    case 'additionalProperties':
      return {
        field: at(params.additionalProperty),
        rule: 'additionalProperties',
        message: `${describeField(at(params.additionalProperty))} is not an allowed field`
      }
    case 'false schema':
      return { field, rule: 'readOnly', message: `${describeField(field)} is set by the server and may not be sent` }
    case 'minLength':
      return {
        field,
        rule: 'minLength',
        message: `${describeField(field)} must have at least ${String(params.limit)} character${params.limit === 1 ? '' : 's'}`
      }
    case 'maxLength':
      return {
        field,
        rule: 'maxLength',
        message: `${describeField(field)} must have at most ${String(params.limit)} characters`
      }
    case 'format':
      return {
        field,
        rule: 'format',
        message: `${describeField(field)} must be ${FORMAT_NAMES[String(params.format)] ?? `in the format "${String(params.format)}"`}`
      }
    case 'type':
      return {
        field,
        rule: 'type',
        message: `${describeField(field)} must be ${String(params.type).replace(/,/g, ' or ')}`
      }
    default:
      return { field, rule: error.keyword, message: `${describeField(field)} ${error.message ?? 'is invalid'}` }
  }
}

const FORMAT_NAMES: Record<string, string> = {
  email: 'a valid email address',
  'date-time': 'a date-time (RFC 3339, e.g. 2026-01-31T12:00:00Z)',
  uri: 'a URI',
  uuid: 'a UUID'
}
