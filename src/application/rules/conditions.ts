import { MATCH_ALL, type Filter, type Value } from '../../domain/query/ast.js'
import { parseQuery } from '../../domain/query/parse-query.js'
import { isPlainObject } from '../../domain/objects.js'
import { SetupError } from '../../domain/errors/setup-error.js'

/**
 * A rule's conditions in plumage's query AST. CASL writes conditions as MongoDB queries; plumage's
 * query syntax is the same subset ($eq, $ne, $in, $nin, $lt, $lte, $gt, $gte, $or, $and), so the
 * app's own parser compiles them: a condition means in a rule exactly what it means in a query,
 * and every store (memory, PostgreSQL, RethinkDB) already evaluates it the same way.
 */
export function conditionsToFilter(conditions: unknown): Filter {
  if (!isPlainObject(conditions)) throw new RulesError('has conditions that are not an object')
  assertDefined(conditions, '')
  for (const key of Object.keys(conditions)) {
    if (PAGING_KEYS.has(key)) throw new RulesError(`uses the operator ${key}, which the query AST does not support`)
  }
  try {
    return parseQuery(conditions).filter
  } catch (error) {
    const operator = /(\$\w+)/.exec((error as Error).message)?.[1]
    const what = operator ? `the operator ${operator}` : `conditions the query AST cannot express`
    throw new RulesError(`uses ${what}, which the query AST does not support`)
  }
}

/** What the parser takes for paging and projection: meaningless in a condition. */
const PAGING_KEYS = new Set(['$limit', '$skip', '$sort', '$select'])

/**
 * An undefined value would be dropped by the parser (`{ userId: user.id }` for a user without an id would
 * match every record), so it is refused like a bad rule.
 */
function assertDefined(value: unknown, path: string): void {
  if (value === undefined) throw new RulesError(`has an undefined condition on '${path}'`)
  if (Array.isArray(value)) for (const item of value) assertDefined(item, path)
  else if (isPlainObject(value))
    for (const key of Object.keys(value)) assertDefined(value[key], key.startsWith('$') ? path : key)
}

/**
 * The records a filter does not match, for `cannot` rules. Exact for and/or (De Morgan), eq ↔ ne and in ↔ nin,
 * whose semantics are complements in every store (null matches missing fields on both sides). Range operators
 * are not: `$lt` and `$gte` both skip values of another type. A `cannot` with one is refused at startup.
 */
export function negate(filter: Filter): Filter {
  switch (filter.op) {
    case 'and':
      return { op: 'or', filters: filter.filters.map(negate) }
    case 'or':
      return { op: 'and', filters: filter.filters.map(negate) }
    case 'eq':
      return { op: 'ne', field: filter.field, value: filter.value }
    case 'ne':
      return { op: 'eq', field: filter.field, value: filter.value }
    case 'in':
      return { op: 'nin', field: filter.field, values: filter.values }
    case 'nin':
      return { op: 'in', field: filter.field, values: filter.values }
    default:
      throw new RulesError(`uses $${filter.op} in a cannot rule, which has no exact negation in the query AST`)
  }
}

/** The raw query (as `params.query` holds it) that parses back into `filter`: how rules narrow a call. */
export function filterToQuery(filter: Filter): Record<string, unknown> {
  switch (filter.op) {
    case 'and':
      return filter.filters.length === 0 ? {} : { $and: filter.filters.map(filterToQuery) }
    case 'or':
      return { $or: filter.filters.map(filterToQuery) }
    case 'in':
    case 'nin':
      return { [filter.field]: { [`$${filter.op}`]: filter.values } }
    case 'search':
      return { [filter.field]: { $search: filter.pattern } }
    default:
      return { [filter.field]: { [`$${filter.op}`]: filter.value as Value } }
  }
}

/** The fields a filter names (for validation against the service's schema). */
export function fieldsOf(filter: Filter, into = new Set<string>()): Set<string> {
  if ('filters' in filter) for (const part of filter.filters) fieldsOf(part, into)
  else into.add(filter.field)
  return into
}

export function and(filters: Filter[]): Filter {
  return filters.length === 1 ? filters[0]! : { op: 'and', filters }
}

export function or(filters: Filter[]): Filter {
  return filters.length === 1 ? filters[0]! : { op: 'or', filters }
}

export { MATCH_ALL }

/** A rule set that cannot be used: unknown service, action or field, or an operator the query AST lacks. */
export class RulesError extends SetupError {
  override readonly name = 'RulesError'
}
