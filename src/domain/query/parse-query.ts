import { BadRequest, type FeathersError } from '../errors/errors.js'
import { MAX_NESTING_DEPTH } from '../service/nesting-depth.js'
import type { Filter, Scalar, SortDirection, StoreQuery, Value } from './ast.js'
import { isPlainObject } from '../objects.js'

export interface ParseOptions {
  /** Adapter-specific field operators this store understands, e.g. ['$search', '$contains']. */
  operators?: readonly string[]
}

const COMPARISONS = { $lt: 'lt', $lte: 'lte', $gt: 'gt', $gte: 'gte' } as const
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
const SORT_DIRECTIONS: Record<string, SortDirection> = { '1': 1, '-1': -1, asc: 1, desc: -1 }

/**
 * Validates a raw `params.query` (from qs over REST: all strings; from JSON over sockets: typed)
 * and returns the typed AST. Adapters only ever see the AST.
 */
export function parseQuery(raw: unknown, options: ParseOptions = {}): StoreQuery {
  const query: StoreQuery = { filter: { op: 'and', filters: [] }, sort: [], skip: 0 }
  if (raw === undefined || raw === null) return query
  if (!isPlainObject(raw)) throw new BadRequest('The query must be an object')
  const extra = options.operators ?? []
  const filters: Filter[] = []
  for (const key of Object.keys(raw)) {
    assertSafeKey(key)
    const value = raw[key]
    if (value === undefined) continue
    switch (key) {
      case '$limit':
        query.limit = parseCount(key, value)
        break
      case '$skip':
        query.skip = parseCount(key, value)
        break
      case '$sort':
        query.sort = parseSort(value)
        break
      case '$select':
        query.select = parseSelect(value)
        break
      case '$or':
      case '$and':
        filters.push(parseLogical(key, value, extra, 0))
        break
      default:
        if (key.startsWith('$')) throw new BadRequest(`Invalid filter value ${key}`)
        filters.push(...parseField(key, value, extra))
    }
  }
  // No criteria (every get, patch and page without a filter): the match-all filter made above stays.
  if (filters.length > 0) query.filter = filters.length === 1 ? filters[0]! : { op: 'and', filters }
  return query
}

/** The criteria objects inside `$or`/`$and`: fields and nested `$or`/`$and` only. */
function parseCriteria(criteria: unknown, extra: readonly string[], depth: number): Filter {
  if (!isPlainObject(criteria)) throw new BadRequest('Each $or/$and entry must be an object of criteria')
  const filters: Filter[] = []
  for (const key of Object.keys(criteria)) {
    assertSafeKey(key)
    const value = criteria[key]
    if (value === undefined) continue
    if (key === '$or' || key === '$and') filters.push(parseLogical(key, value, extra, depth + 1))
    else if (key.startsWith('$')) throw invalidParameter(`Invalid query parameter ${key}`, criteria)
    else filters.push(...parseField(key, value, extra))
  }
  return filters.length === 1 ? filters[0]! : { op: 'and', filters }
}

function parseLogical(key: '$or' | '$and', value: unknown, extra: readonly string[], depth: number): Filter {
  if (depth > MAX_NESTING_DEPTH) throw new BadRequest(`$or/$and may be nested at most ${MAX_NESTING_DEPTH} levels deep`)
  const list = asList(value)
  if (!list) throw new BadRequest(`${key} must be an array of criteria`)
  return { op: key === '$or' ? 'or' : 'and', filters: list.map((criteria) => parseCriteria(criteria, extra, depth)) }
}

function parseField(field: string, value: unknown, extra: readonly string[]): Filter[] {
  if (!isPlainObject(value) || !Object.keys(value).some((key) => key.startsWith('$'))) {
    return [{ op: 'eq', field, value: toValue(value) }]
  }
  return Object.keys(value).map((operator): Filter => {
    assertSafeKey(operator)
    const operand = value[operator]
    switch (operator) {
      case '$eq':
        return { op: 'eq', field, value: toValue(operand) }
      case '$ne':
        return { op: 'ne', field, value: toValue(operand) }
      case '$lt':
      case '$lte':
      case '$gt':
      case '$gte':
        return { op: COMPARISONS[operator], field, value: toScalar(field, operator, operand) }
      case '$in':
      case '$nin': {
        const values = asList(operand) ?? (isPlainObject(operand) ? undefined : [operand])
        if (!values) throw invalidParameter(`Invalid query parameter ${operator}: expected a list of values`, value)
        return { op: operator === '$in' ? 'in' : 'nin', field, values: values.map((item) => toValue(item)) }
      }
      case '$search':
        if (!extra.includes(operator)) break
        if (typeof operand !== 'string')
          throw invalidParameter(`${operator} on '${field}' needs a string pattern`, value)
        return { op: 'search', field, pattern: operand }
      case '$contains':
        if (!extra.includes(operator)) break
        return { op: 'contains', field, value: toValue(operand) }
    }
    throw invalidParameter(`Invalid query parameter ${operator}`, value)
  })
}

function parseCount(name: string, value: unknown): number {
  const count = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) {
    throw new BadRequest(`Invalid ${name}: expected a non-negative integer, got ${JSON.stringify(value)}`)
  }
  return count
}

function parseSort(value: unknown): StoreQuery['sort'] {
  if (!isPlainObject(value))
    throw new BadRequest('$sort must be an object of field: direction (1, -1, "asc" or "desc")')
  return Object.keys(value).map((field) => {
    assertSafeKey(field)
    const raw = value[field]
    const direction =
      typeof raw === 'number' || typeof raw === 'string' ? SORT_DIRECTIONS[String(raw).toLowerCase()] : undefined
    if (!direction) throw new BadRequest(`Invalid $sort direction for '${field}': use 1, -1, "asc" or "desc"`)
    return [field, direction]
  })
}

function parseSelect(value: unknown): string[] {
  const fields = asList(value) ?? [value]
  for (const field of fields) {
    if (typeof field !== 'string') throw new BadRequest('$select must be a list of field names')
    assertSafeKey(field)
  }
  return fields as string[]
}

/** Arrays, and objects whose keys are exactly '0'..'n-1' (what qs makes of long arrays). */
export function asList(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value
  if (!isPlainObject(value)) return undefined
  const keys = Object.keys(value)
  if (keys.length === 0 || !keys.every((key, index) => key === String(index))) return undefined
  return keys.map((key) => value[key])
}

function toScalar(field: string, operator: string, value: unknown): Scalar {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value as Scalar
  throw new BadRequest(`${operator} on '${field}' needs a single value`, { [operator]: value })
}

function toValue(value: unknown, depth = 0): Value {
  if (value === undefined) return null
  if (depth > MAX_NESTING_DEPTH)
    throw new BadRequest(`Query values may be nested at most ${MAX_NESTING_DEPTH} levels deep`)
  if (isPlainObject(value))
    for (const key of Object.keys(value)) {
      assertSafeKey(key)
      toValue(value[key], depth + 1)
    }
  else if (Array.isArray(value)) for (const item of value) toValue(item, depth + 1)
  return value as Value
}

/** Refuses prototype keys, also as a segment of a dotted path ('a.__proto__.b'). */
function assertSafeKey(key: string): void {
  if (FORBIDDEN_KEYS.has(key) || (key.includes('.') && key.split('.').some((part) => FORBIDDEN_KEYS.has(part)))) {
    throw new BadRequest(`Invalid query parameter ${key}`)
  }
}

/** `data` is the object that held the offending key, kept whole (even fields named `errors`). */
function invalidParameter(message: string, data: unknown): FeathersError {
  const error = new BadRequest(message)
  Object.defineProperty(error, 'data', { value: data, enumerable: true })
  return error
}
