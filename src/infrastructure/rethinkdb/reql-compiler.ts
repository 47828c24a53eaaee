import type { MultiFieldSelector, R, RDatum, RStream } from 'rethinkdb-ts'
import { assertNever, isMatchAll, type Filter, type Scalar, type StoreQuery } from '../../domain/query/ast.js'

/**
 * Translates the query AST into ReQL. Building terms needs no connection, so everything here is pure
 * and unit-tested by reading the generated term. The semantics are the ones of
 * src/infrastructure/memory/compile-filter.ts (the memory adapter): both adapters must return the same records.
 */

/**
 * Reads a field of a row; a dotted name is a path into nested objects. Missing fields (and paths
 * through non-objects) read as null instead of raising a ReQL error, so `{ a: null }`, `{}` and
 * `{ a: 'text' }` all read `a.b` as null, as the memory adapter does.
 */
export function field(r: R, doc: RDatum, path: string): RDatum {
  const [head = path, ...rest] = path.split('.')
  let value: RDatum = doc(head).default(null)
  for (const key of rest) {
    // Bracket on a string or number is a query error, not a non-existence one: guard the type.
    value = value.do((parent: RDatum) => r.branch(parent.typeOf().eq('OBJECT'), parent(key).default(null), null)) as RDatum
  }
  return value
}

/** The ReQL type name of a JS scalar, for range operators that only compare values of one type. */
function reqlType(value: Exclude<Scalar, null>): 'NUMBER' | 'STRING' | 'BOOL' {
  switch (typeof value) {
    case 'number': return 'NUMBER'
    case 'string': return 'STRING'
    default: return 'BOOL'
  }
}

const RANGE = {
  lt: (value: RDatum, bound: string) => value.lt(bound),
  lte: (value: RDatum, bound: string) => value.le(bound),
  gt: (value: RDatum, bound: string) => value.gt(bound),
  gte: (value: RDatum, bound: string) => value.ge(bound)
} as const

export type ReqlPredicate = (doc: RDatum) => RDatum<boolean>

/** One predicate for `filter(...)`; callers skip `filter` entirely when the filter matches all. */
export function compileFilter(r: R, filter: Filter): ReqlPredicate {
  return (doc) => predicate(r, filter, doc)
}

function predicate(r: R, filter: Filter, doc: RDatum): RDatum<boolean> {
  switch (filter.op) {
    case 'and':
    case 'or': {
      const parts = filter.filters.map((part) => predicate(r, part, doc))
      // r.and()/r.or() refuse zero arguments; the identities are true and false.
      if (parts.length === 0) return r.expr(filter.op === 'and')
      if (parts.length === 1) return parts[0]!
      const [first, ...others] = parts
      return filter.op === 'and' ? r.and(first!, ...others) : r.or(first!, ...others)
    }
    case 'eq':
      // default(null) makes null match missing fields too (a bare eq skips rows lacking the field).
      return field(r, doc, filter.field).eq(filter.value)
    case 'ne':
      return field(r, doc, filter.field).ne(filter.value)
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      // RethinkDB orders every number before every string, so "n < 10" would match every string;
      // compare only values of the bound's type. A null bound matches nothing (as in memory).
      if (filter.value === null) return r.expr(false)
      const value = field(r, doc, filter.field)
      // The typings only admit strings, numbers and dates; ReQL compares booleans (false < true) too.
      const bound = filter.value as string
      return value.typeOf().eq(reqlType(filter.value)).and(RANGE[filter.op](value, bound))
    }
    case 'in':
    case 'nin': {
      const member = r.expr(filter.values).contains(field(r, doc, filter.field) as never)
      return filter.op === 'in' ? member : member.not()
    }
    case 'search': {
      // match() on a non-string fails the whole query; `and` short-circuits, so guard the type first.
      const value = field(r, doc, filter.field)
      return value.typeOf().eq('STRING').and(value.match(filter.pattern).ne(null))
    }
    case 'contains': {
      const value = field(r, doc, filter.field)
      return value.typeOf().eq('ARRAY').and(value.contains(filter.value as never))
    }
    default:
      return assertNever(filter)
  }
}

/**
 * Sort keys. RethinkDB orders mixed types differently from the memory adapter (booleans before null,
 * null before numbers…), so each key sorts by [type rank, value] with the memory adapter's ranks:
 * null/missing < numbers < strings < booleans < times < arrays < objects.
 */
const TYPE_RANKS = { NULL: 0, NUMBER: 1, STRING: 2, BOOL: 3, 'PTYPE<TIME>': 4, ARRAY: 5 }
const OTHER_RANK = 6

export function sortKey(r: R, doc: RDatum, path: string): RDatum {
  return field(r, doc, path).do((value: RDatum) => r.expr([r.expr(TYPE_RANKS)(value.typeOf()).default(OTHER_RANK), value])) as RDatum
}

// r.asc/r.desc are typed `any` by the driver; this is the one place that touches them.
type Ordering = ReturnType<R['asc']>

export function compileSort(r: R, sort: StoreQuery['sort']): Ordering[] {
  return sort.map(([path, direction]) => {
    const key = (doc: RDatum) => sortKey(r, doc, path)
    return direction === 1 ? r.asc(key) : r.desc(key)
  })
}

/** `$select` for pluck: the listed fields (literal names, like the memory adapter) and always the id. */
export function selection(select: readonly string[], idField: string): MultiFieldSelector[] {
  return [...new Set([...select, idField])]
}

/** The filter applied to a sequence; the sequence itself when the filter matches everything. */
export function applyFilter<T>(r: R, sequence: RStream<T>, filter: Filter): RStream<T> {
  return isMatchAll(filter) ? sequence : sequence.filter(compileFilter(r, filter))
}

/** Sort, skip, limit and select on top of an already filtered sequence. */
export function applyPage<T>(r: R, sequence: RStream<T>, query: StoreQuery, idField: string): RStream<T> {
  let result = sequence
  if (query.sort.length > 0) result = result.orderBy(...compileSort(r, query.sort))
  if (query.skip > 0) result = result.skip(query.skip)
  if (query.limit !== undefined) result = result.limit(query.limit)
  if (query.select) result = result.pluck(...selection(query.select, idField)) as unknown as RStream<T>
  return result
}
