import type { JsonSchema, JsonSchemaObject, JsonType, SchemaIssue, StringTransform } from './json-schema.js'
import { asList } from '../query/parse-query.js'
import { validationError } from './validation-error.js'
import { isPlainObject } from '../objects.js'

type RawObject = Record<string, unknown>

const RANGE_OPERATORS = new Set(['$eq', '$ne', '$lt', '$lte', '$gt', '$gte'])
const LIST_OPERATORS = new Set(['$in', '$nin'])
const NON_STRING_TYPES: readonly JsonType[] = ['integer', 'number', 'boolean', 'null']
const INTEGER = /^-?\d+$/
const DECIMAL = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2}))?$/

/**
 * Turns a raw `params.query` into one whose values have the types the query schema declares, wherever
 * a value appears: plain fields, `$in`/`$nin` lists (arrays, or the objects qs makes of long lists),
 * `$lt`…`$gte`, `$ne`, inside `$or`/`$and`. Over REST every value arrives as a string; over sockets
 * values are JSON, so `?age=30` and `{ age: 30 }` query the same records.
 *
 * - integer/number: decimal notation only, finite (`NaN`, `Infinity`, `1e999` are refused).
 * - boolean: `true`/`false`; null: `null` (and JSON null stays null: it is never turned into 0).
 * - `format: date-time` strings: RFC 3339 date-times (or dates, or epoch milliseconds over JSON),
 *   normalised to `toISOString()` form so they compare with stored ISO strings.
 * - `transform` (trim, toLowerCase…) normalises string values as the data schema does.
 *
 * Fields the schema does not declare: refused when `additionalProperties` is false (also as `$sort`
 * keys), else passed on as sent. Every failing value is reported at once in one 400.
 * Operators are not checked here: the query parser refuses unknown ones.
 */
export function coerceQuery(raw: unknown, schema: JsonSchemaObject, idField?: string): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw
  const issues: SchemaIssue[] = []
  const result = coerceCriteria(raw as RawObject, schema, issues, true, idField)
  if (issues.length > 0) throw validationError('query', issues)
  return result
}

function coerceCriteria(
  criteria: RawObject,
  schema: JsonSchemaObject,
  issues: SchemaIssue[],
  top: boolean,
  idField?: string
): RawObject {
  const out: RawObject = {}
  for (const key of Object.keys(criteria)) {
    const value = criteria[key]
    if (key === '$or' || key === '$and') {
      const list = asList(value)
      out[key] = list
        ? list.map((item) => (isPlainObject(item) ? coerceCriteria(item, schema, issues, false, idField) : item))
        : value
    } else if (top && key === '$sort') {
      // Sorting reveals the order of values; `$select` of any field stays harmless (it only projects).
      for (const field of isPlainObject(value) ? Object.keys(value) : []) {
        if (
          schema.additionalProperties === false &&
          typeof field === 'string' &&
          field !== idField &&
          propertyOf(schema, field) === undefined
        ) {
          issues.push(unknownField(field, `${key} `))
        }
      }
      out[key] = value
    } else if (key.startsWith('$')) {
      out[key] = value
    } else {
      const property = propertyOf(schema, key)
      if (property === undefined) {
        if (schema.additionalProperties === false && key !== idField) issues.push(unknownField(key, ''))
        out[key] = value
      } else {
        out[key] = coerceField(key, value, property, issues)
      }
    }
  }
  return out
}

function coerceField(field: string, value: unknown, schema: JsonSchema, issues: SchemaIssue[]): unknown {
  if (!isPlainObject(value) || !Object.keys(value).some((key) => key.startsWith('$')))
    return coerceValue(field, value, schema, issues)
  const out: RawObject = {}
  for (const operator of Object.keys(value)) {
    const operand = value[operator]
    if (RANGE_OPERATORS.has(operator)) out[operator] = coerceValue(field, operand, schema, issues)
    else if (LIST_OPERATORS.has(operator)) {
      const list = asList(operand) ?? (isPlainObject(operand) ? undefined : [operand])
      out[operator] = list ? list.map((item) => coerceValue(field, item, schema, issues)) : operand
    } else if (operator === '$contains' && typeof schema === 'object' && schema.items !== undefined) {
      out[operator] = coerceValue(field, operand, schema.items, issues)
    } else out[operator] = operand
  }
  return out
}

/** One value against one property schema; unknown shapes (no `type`) pass unchanged. */
function coerceValue(field: string, value: unknown, schema: JsonSchema, issues: SchemaIssue[]): unknown {
  if (typeof schema !== 'object') return value
  const types = typesOf(schema)
  if (types.size === 0) return value
  const dateTime = formatOf(schema) === 'date-time'
  const fail = () => {
    issues.push({
      field,
      rule: dateTime ? 'format' : 'type',
      message: `'${field}' must be ${dateTime ? 'a date-time (RFC 3339, e.g. 2026-01-31T12:00:00Z)' : [...types].join(' or ')}`
    })
    return value
  }
  if (value === null || value === undefined) return value
  if (typeof value === 'string') {
    for (const type of NON_STRING_TYPES) {
      if (!types.has(type)) continue
      const coerced = fromString(type, value)
      if (coerced !== NO_MATCH) return coerced
    }
    if (!types.has('string')) return fail()
    const text = applyTransforms(value, schema.transform)
    if (!dateTime) return text
    return toDateTime(text) ?? fail()
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return fail()
    if (types.has('number') || (types.has('integer') && Number.isInteger(value))) return value
    if (types.has('string')) return dateTime ? (toDateTime(value) ?? fail()) : String(value)
    return fail()
  }
  if (typeof value === 'boolean') {
    if (types.has('boolean')) return value
    return types.has('string') && !dateTime ? String(value) : fail()
  }
  if (Array.isArray(value) && types.has('array')) {
    const items = schema.items
    return items === undefined ? value : value.map((item) => coerceValue(field, item, items, issues))
  }
  if (isPlainObject(value) && types.has('object')) return value
  return fail()
}

const NO_MATCH = Symbol('no match')

function fromString(type: JsonType, text: string): unknown {
  switch (type) {
    case 'integer': {
      if (!INTEGER.test(text)) return NO_MATCH
      const number = Number(text)
      return Number.isSafeInteger(number) ? number : NO_MATCH
    }
    case 'number': {
      if (!DECIMAL.test(text)) return NO_MATCH
      const number = Number(text)
      return Number.isFinite(number) ? number : NO_MATCH
    }
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : NO_MATCH
    case 'null':
      return text === 'null' ? null : NO_MATCH
    default:
      return NO_MATCH
  }
}

function toDateTime(value: string | number): string | undefined {
  if (typeof value === 'string' && !DATE_TIME.test(value)) return undefined
  const time = typeof value === 'number' ? value : Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value)
  if (!Number.isFinite(time)) return undefined
  const date = new Date(time)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/** Applies `transform` steps to a string, as the validator does to data. */
function applyTransforms(text: string, transforms: unknown): string {
  if (!Array.isArray(transforms)) return text
  let result = text
  for (const step of transforms as StringTransform[]) {
    if (step === 'trim') result = result.trim()
    else if (step === 'toLowerCase') result = result.toLowerCase()
    else if (step === 'toUpperCase') result = result.toUpperCase()
  }
  return result
}

/** The declared types of a property, also through `anyOf`/`oneOf` of typed members. */
function typesOf(schema: JsonSchemaObject): Set<JsonType> {
  const types = new Set<JsonType>()
  const add = (member: JsonSchema) => {
    if (typeof member !== 'object') return
    const type = member.type
    if (typeof type === 'string') types.add(type)
    else if (Array.isArray(type)) for (const each of type as JsonType[]) types.add(each)
    if (type === undefined && member.enum)
      for (const each of member.enum) types.add(each === null ? 'null' : (typeof each as JsonType))
    for (const nested of [...(member.anyOf ?? []), ...(member.oneOf ?? [])]) add(nested)
  }
  add(schema)
  return types
}

function formatOf(schema: JsonSchemaObject): string | undefined {
  if (typeof schema.format === 'string') return schema.format
  for (const member of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    if (typeof member === 'object' && typeof member.format === 'string') return member.format
  }
  return undefined
}

/** The property schema for `field`, following dotted paths into nested `properties`. */
function propertyOf(schema: JsonSchemaObject, field: string): JsonSchema | undefined {
  let current: JsonSchema | undefined = schema
  for (const part of field.split('.')) {
    if (typeof current !== 'object') return undefined
    const properties: Readonly<Record<string, JsonSchema>> | undefined = current.properties
    if (!properties || !Object.hasOwn(properties, part)) {
      // Below a declared property without its own `properties` (a free-form object): no types to apply.
      return current === schema ? undefined : true
    }
    current = properties[part]
  }
  return current
}

function unknownField(field: string, where: string): SchemaIssue {
  return { field, rule: 'additionalProperties', message: `${where}'${field}' is not a field that can be queried` }
}
