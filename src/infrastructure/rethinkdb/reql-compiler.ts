import type { MultiFieldSelector, R, RDatum, RStream } from 'rethinkdb-ts'
import { assertNever, isMatchAll, type Filter, type Scalar, type StoreQuery } from '../../domain/query/ast.js'
import { onlyKinds, UNKNOWN_SHAPES, type FieldShapes, type Kind } from '../../domain/schema/field-shapes.js'

/**
 * Translates the query AST into ReQL. Building terms needs no connection, so everything here is pure
 * and unit-tested by reading the generated term. The semantics are the ones of the reference evaluator,
 * src/domain/query/compile-filter.ts (which the memory adapter runs): both adapters must return the same
 * records. The guards that make RethinkDB agree are paid only where they can matter:
 *
 * - equalities of plain field names with a string, number or boolean become one object filter,
 *   `filter({ city: 'Rome' })`, which the server evaluates natively;
 * - a plain name is read as `row('age')`; a dotted name walks its path through objects only;
 * - `filter` skips a row whose predicate reads a missing field, so a criterion that is false for
 *   missing fields (equality with a value, ranges, `$in` without null, `$search`, `$contains`)
 *   reads without `default(null)` where nothing but `and` is above it (a strict position);
 * - a field whose kinds are known (FieldShapes, from the records' schema) needs no type guard, and
 *   sorts by its plain value when RethinkDB orders its kinds as the memory adapter does.
 */
export class ReqlCompiler {
  constructor(
    private readonly r: R,
    private readonly shapes: FieldShapes = UNKNOWN_SHAPES
  ) {}

  /** The sequence filtered by `filter`; the sequence itself when the filter matches everything. */
  filter<T>(sequence: RStream<T>, filter: Filter): RStream<T> {
    if (isMatchAll(filter)) return sequence
    const equalities: Record<string, Scalar> = {}
    const others: Filter[] = []
    for (const part of conjuncts(filter)) {
      if (
        part.op === 'eq' &&
        isIndexableScalar(part.value) &&
        !part.field.includes('.') &&
        !Object.hasOwn(equalities, part.field)
      ) {
        equalities[part.field] = part.value
      } else {
        others.push(part)
      }
    }
    let result = sequence
    if (Object.keys(equalities).length > 0) result = result.filter(equalities as never)
    if (others.length > 0) result = result.filter((doc: RDatum) => this.all(others, doc, true))
    return result
  }

  /**
   * The filter as one predicate for places that do not skip rows on errors (`do`, `branch`): every
   * read defaults to null, as under `$or`.
   */
  predicate(filter: Filter): (doc: RDatum) => RDatum<boolean> {
    return (doc) => this.test(filter, doc, false)
  }

  /** `orderBy` arguments for `sort`, in key order. */
  orderings(sort: StoreQuery['sort']): Ordering[] {
    return sort.map(([path, direction]) => {
      const key = this.sortKey(path)
      return direction === 1 ? this.r.asc(key) : this.r.desc(key)
    })
  }

  /** Sort, skip, limit and select on top of an already filtered sequence. */
  page<T>(sequence: RStream<T>, query: StoreQuery, idField: string): RStream<T> {
    let result = sequence
    if (query.sort.length > 0) result = result.orderBy(...this.orderings(query.sort))
    return skipLimitSelect(result, query, idField)
  }

  /**
   * Reads a field of a row; a dotted name is a path into nested objects. With `safe`, missing fields
   * (and paths through non-objects) read as null instead of raising, as the memory adapter reads them.
   */
  read(doc: RDatum, path: string, safe: boolean): RDatum {
    if (!path.includes('.')) return safe ? doc(path).default(null) : doc(path)
    const keys = path.split('.')
    // In a strict position, a path through objects (or null) raises only "missing", which skips the row.
    const throughObjects = keys
      .slice(0, -1)
      .every((_, index) => onlyKinds(this.shapes(keys.slice(0, index + 1).join('.')), 'object', 'null'))
    if (!safe && throughObjects) return keys.reduce((value, key) => value(key), doc)
    let value: RDatum = doc(keys[0]!).default(null)
    for (const key of keys.slice(1)) {
      // Bracket on a string or number is a query error, not a missing field: guard the type.
      value = value.do((parent: RDatum) =>
        this.r.branch(parent.typeOf().eq('OBJECT'), parent(key).default(null), null)
      ) as RDatum
    }
    return value
  }

  private all(filters: Filter[], doc: RDatum, strict: boolean): RDatum<boolean> {
    const parts = filters.map((part) => this.test(part, doc, strict))
    if (parts.length === 1) return parts[0]!
    const [first, ...others] = parts
    return this.r.and(first!, ...others)
  }

  private test(filter: Filter, doc: RDatum, strict: boolean): RDatum<boolean> {
    const { r } = this
    switch (filter.op) {
      case 'and':
      case 'or': {
        // r.and()/r.or() refuse zero arguments; the identities are true and false.
        if (filter.filters.length === 0) return r.expr(filter.op === 'and')
        if (filter.op === 'and') return this.all(filter.filters, doc, strict)
        const [first, ...others] = filter.filters.map((part) => this.test(part, doc, false))
        return others.length === 0 ? first! : r.or(first!, ...others)
      }
      case 'eq':
        // Equality with null must also match missing fields: read them as null.
        return this.read(doc, filter.field, !strict || filter.value === null).eq(filter.value)
      case 'ne':
        return this.read(doc, filter.field, true).ne(filter.value)
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte':
        return this.range(filter, doc, strict)
      case 'in':
      case 'nin': {
        const hasNull = filter.values.includes(null)
        const member = r
          .expr(filter.values)
          .contains(this.read(doc, filter.field, !strict || hasNull || filter.op === 'nin') as never)
        return filter.op === 'in' ? member : member.not()
      }
      case 'search': {
        // match() on a non-string fails the whole query; `and` short-circuits, so guard the type first.
        const value = this.read(doc, filter.field, !strict)
        const matches = value.match(filter.pattern).ne(null)
        return this.knownAs(filter.field, 'string', strict) ? matches : value.typeOf().eq('STRING').and(matches)
      }
      case 'contains': {
        const value = this.read(doc, filter.field, !strict)
        const contains = value.contains(filter.value as never)
        return this.knownAs(filter.field, 'array', strict) ? contains : value.typeOf().eq('ARRAY').and(contains)
      }
      default:
        return assertNever(filter)
    }
  }

  /**
   * RethinkDB orders every number before every string, so "n < 10" would match every string: ranges
   * compare only values of the bound's type (a null bound matches nothing, as in memory). The guard
   * is left out when the field can hold no other kind, and null (or a missing field read as null)
   * cannot pass the comparison either.
   */
  private range(
    filter: Extract<Filter, { op: 'lt' | 'lte' | 'gt' | 'gte' }>,
    doc: RDatum,
    strict: boolean
  ): RDatum<boolean> {
    const bound = filter.value
    if (bound === null) return this.r.expr(false)
    const kind = typeof bound as 'number' | 'string' | 'boolean'
    const value = this.read(doc, filter.field, !strict)
    // The typings only admit strings, numbers and dates; ReQL compares booleans (false < true) too.
    const compared = RANGE[filter.op](value, bound as string)
    const shape = this.shapes(filter.field)
    if (!onlyKinds(shape, kind, 'null')) return value.typeOf().eq(REQL_TYPES[kind]).and(compared)
    const mayBeNull = shape!.kinds.has('null') || (!strict && !shape!.required)
    // null sorts below numbers and strings but above booleans.
    const nullFails = (kind === 'boolean') === (filter.op === 'lt' || filter.op === 'lte')
    return !mayBeNull || nullFails ? compared : value.typeOf().eq(REQL_TYPES[kind]).and(compared)
  }

  /** Whether every value the field reads as here is of `kind` (no guard needed). */
  private knownAs(field: string, kind: Kind, strict: boolean): boolean {
    const shape = this.shapes(field)
    return onlyKinds(shape, kind) && (strict || shape!.required)
  }

  /**
   * A sort key. RethinkDB orders mixed types differently from the memory adapter (booleans before
   * null, null before numbers…), so a key of unknown kinds sorts by [type rank, value] with the
   * memory adapter's ranks: null/missing < numbers < strings < booleans < times < arrays < objects.
   * Numbers, strings and null (missing first) are in the same order in both: those sort natively.
   */
  sortKey(path: string): string | ((doc: RDatum) => RDatum) {
    if (onlyKinds(this.shapes(path), 'number', 'string', 'null'))
      return path.includes('.') ? (doc) => this.read(doc, path, true) : path
    return (doc) =>
      this.read(doc, path, true).do((value: RDatum) =>
        this.r.expr([this.r.expr(TYPE_RANKS)(value.typeOf()).default(OTHER_RANK), value])
      ) as RDatum
  }
}

// r.asc/r.desc are typed `any` by the driver; this is the one place that names their result.
export type Ordering = ReturnType<R['asc']>

const RANGE = {
  lt: (value: RDatum, bound: string) => value.lt(bound),
  lte: (value: RDatum, bound: string) => value.le(bound),
  gt: (value: RDatum, bound: string) => value.gt(bound),
  gte: (value: RDatum, bound: string) => value.ge(bound)
} as const

const REQL_TYPES = { number: 'NUMBER', string: 'STRING', boolean: 'BOOL' } as const
const TYPE_RANKS = { NULL: 0, NUMBER: 1, STRING: 2, BOOL: 3, 'PTYPE<TIME>': 4, ARRAY: 5 }
const OTHER_RANK = 6

/** The criteria that must all hold: the filter's top-level `and`, flattened. */
export function conjuncts(filter: Filter): Filter[] {
  return filter.op === 'and' ? filter.filters.flatMap(conjuncts) : [filter]
}

/** A value RethinkDB can look up in an index and filters natively: a string, number or boolean. */
export function isIndexableScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}

/** `$select` for pluck: the listed fields (literal names, like the memory adapter) and always the id. */
export function selection(select: readonly string[], idField: string): MultiFieldSelector[] {
  return [...new Set([...select, idField])]
}

/** Skip, limit and select on top of an already ordered sequence. */
export function skipLimitSelect<T>(
  sequence: RStream<T>,
  query: Pick<StoreQuery, 'skip' | 'limit' | 'select'>,
  idField: string
): RStream<T> {
  let result = sequence
  if (query.skip > 0) result = result.skip(query.skip)
  if (query.limit !== undefined) result = result.limit(query.limit)
  if (query.select) result = result.pluck(...selection(query.select, idField)) as unknown as RStream<T>
  return result
}
