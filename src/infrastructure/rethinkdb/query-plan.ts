import type { R, RDatum, RStream, RTable } from 'rethinkdb-ts'
import type { Filter, Scalar, SortDirection, StoreQuery } from '../../domain/query/ast.js'
import { beyond } from '../../domain/query/cursor.js'
import type { Data } from '../../domain/service/service.js'
import type { FieldShape, FieldShapes, Kind } from '../../domain/schema/field-shapes.js'
import { Criteria, type Key, type Range } from './query-criteria.js'
import { conjuncts, skipLimitSelect, type Ordering, type ReqlCompiler } from './reql-compiler.js'
import { indexValue, type IndexSpec } from './rethinkdb-tables.js'

/**
 * A way into the table that answers some criteria exactly (`used`); the others filter it. `score`
 * counts what it answers: 2 per field fixed by equality, 1 for a range. With `order`, an index
 * read in its order: its `components` fields after the `prefix` fixed by equality serve the first
 * `served` sort keys.
 */
interface Access {
  sequence: RStream<Data>
  used: Filter[]
  score: number
  order?: { index: IndexSpec; prefix: number; components: number; served: number }
}
type OrderedAccess = Access & Required<Pick<Access, 'order'>>
interface KeysetTerms {
  far: RDatum
  bounds: { index: string; leftBound: 'open' | 'closed'; rightBound: 'open' | 'closed' }
  order: { index: Ordering }
}

/** Most keys one getAll looks up for the combinations of `$in` lists on a compound index. */
const MAX_KEYS = 64

/**
 * Chooses how RethinkDB reads the records of a query: by primary key, through a secondary index
 * (`getAll` for equality and `$in`, `between` for ranges, read in index order for a sort, so that
 * with a limit the server stops early), or by scanning the table. An index is used only where its
 * answer is exactly the memory adapter's: rows whose indexed value is missing, null or an object
 * are not in an index, and an index orders mixed types its own way, so a sort is read from an
 * index only for fields holding numbers or strings in every matching record (known from the
 * records' schema, or implied by the query's own criteria). Without an index the compiler's plain
 * filter and sort answer: results never depend on indexes.
 */
export class QueryPlanner {
  /** keysetTerms, by direction and index. */
  private readonly keysets = new Map<string, KeysetTerms>()
  /** The primary key as an index (RethinkDB reads a table in its order under the key's name). */
  private readonly primaryIndex: IndexSpec

  constructor(
    private readonly r: R,
    private readonly table: () => RTable<Data>,
    private readonly compiler: ReqlCompiler,
    private readonly shapes: FieldShapes,
    private readonly idField: string,
    private readonly indexes: readonly IndexSpec[] = []
  ) {
    this.primaryIndex = { name: idField, fields: [idField] }
  }

  /** The matching records in no particular order (for counts, writes and createQuery). */
  matching(filter: Filter): RStream<Data> {
    const criteria = new Criteria(filter, this.shapes)
    const access = this.primary(criteria) ?? best(this.indexes.map((index) => this.access(index, criteria)))
    return access
      ? this.compiler.filter(access.sequence, criteria.without(access.used))
      : this.compiler.filter(this.table(), filter)
  }

  /** The records of `query`: filtered, sorted, skipped, limited and projected. */
  find(query: StoreQuery): RStream<Data> {
    const criteria = new Criteria(query.filter, this.shapes)
    // A key on a field the filter fixes to one value orders nothing. Ties go by id, ascending, as the memory and
    // PostgreSQL stores and a live query's window order them: pages never overlap, a live list equals its find.
    const keys = query.sort.filter(([field]) => criteria.single(field) === undefined)
    const tied = query.sort.length > 0 && !keys.some(([field]) => field === this.idField)
    const sort: StoreQuery['sort'] = tied ? [...keys, [this.idField, 1]] : keys
    const sorted = { ...query, sort }
    const primary = this.primary(criteria)
    const keyset = primary ? undefined : this.keyset(query, criteria)
    if (keyset)
      return skipLimitSelect(this.compiler.filter(keyset.sequence, criteria.without(keyset.used)), query, this.idField)
    if (primary)
      return this.compiler.page(
        this.compiler.filter(primary.sequence, criteria.without(primary.used)),
        sorted,
        this.idField
      )
    const ordered =
      sort.length > 0 && query.limit !== undefined
        ? best(this.indexes.map((index) => this.orderedAccess(index, criteria, sort)))
        : undefined
    const filtered = best(this.indexes.map((index) => this.access(index, criteria)))
    // An index read in sort order that also narrows the rows wins; then equality lookups; then any
    // index order (with a limit the server stops early); then a range.
    const choice =
      ordered && ordered.score > 0 ? ordered : filtered && filtered.score >= 2 ? filtered : (ordered ?? filtered)
    // Nothing narrows or orders the rows but the sort starts with the id: the primary key is read in its order, so
    // that with a limit the server stops early instead of sorting the whole table.
    const byId =
      !choice && sort.length > 0 && query.limit !== undefined
        ? this.orderedAccess(this.primaryIndex, criteria, sort)
        : undefined
    if (!choice && !byId)
      return this.compiler.page(this.compiler.filter(this.table(), query.filter), sorted, this.idField)
    if (!choice) return this.ordered(byId!, criteria, sorted)
    if (!choice.order) {
      const rows = this.compiler.filter(choice.sequence, criteria.without(choice.used))
      return this.compiler.page(rows, sorted, this.idField)
    }
    return this.ordered(choice as OrderedAccess, criteria, sorted)
  }

  /** The rows of an access read in an index's order: limited as they come when it serves the whole sort. */
  private ordered(access: OrderedAccess, criteria: Criteria, sorted: StoreQuery): RStream<Data> {
    const rows = this.compiler.filter(access.sequence, criteria.without(access.used))
    if (access.order.served >= sorted.sort.length) return skipLimitSelect(rows, sorted, this.idField)
    return this.boundary(access, rows, criteria, sorted)
  }

  /**
   * A cursor page (src/domain/query/cursor.ts) whose sort keys, all in one direction and ending with
   * the id, are exactly the fields of a compound index: the records beyond the position are one
   * `between` from it, read in index order, with no filter on the rows (every key present, not null,
   * a number or a string, from the schema).
   */
  private keyset(query: StoreQuery, criteria: Criteria): Access | undefined {
    const { sort, limit } = query
    const direction = sort[0]?.[1]
    const fields = sort.map(([field]) => field)
    if (limit === undefined || sort.length < 2 || fields.at(-1) !== this.idField) return undefined
    if (sort.some(([field, way]) => way !== direction || (field !== this.idField && !criteria.ordered(field, true))))
      return undefined
    const index = this.indexes.find((spec) => spec.fields.join() === fields.join())
    if (!index) return undefined
    for (const part of criteria.parts) {
      const position = positionOf(part, sort.length)
      // An index orders one type apart from the others: each value must be of its key's one declared type.
      if (!position?.every((value, key) => sameKind(this.shapes(fields[key]!), value))) continue
      const cursor = beyond(position, sort, true, this.idField)
      const parts = conjuncts(cursor)
      const used = parts.map((wanted) => criteria.parts.find((have) => sameData(have, wanted)))
      if (used.some((found) => found === undefined)) continue
      const { far, bounds, order } = this.keysetTerms(index, direction!)
      const [lower, upper] = direction === 1 ? [position, far] : [far, position]
      const sequence = this.table()
        .between(lower as never, upper as never, bounds)
        .orderBy(order) as RStream<Data>
      return { sequence, used: used as Filter[], score: Infinity }
    }
    return undefined
  }

  /**
   * The parts of a keyset read of `index` in `direction` that no position changes (its far end, its bounds, its
   * order), built once: the driver spends tens of µs building each ReQL term, a cursor page's planning included.
   */
  private keysetTerms(index: IndexSpec, direction: SortDirection): KeysetTerms {
    const key = `${direction} ${index.name}`
    let terms = this.keysets.get(key)
    if (!terms) {
      const { r } = this
      terms = {
        far: r.expr(index.fields.map(() => (direction === 1 ? r.maxval : r.minval))),
        bounds: {
          index: index.name,
          leftBound: direction === 1 ? 'open' : 'closed',
          rightBound: direction === 1 ? 'closed' : 'open'
        },
        order: { index: direction === 1 ? r.asc(index.name) : r.desc(index.name) }
      }
      this.keysets.set(key, terms)
    }
    return terms
  }

  /** Equality or `$in` on the id field: the primary key answers it. */
  private primary(criteria: Criteria): Access | undefined {
    const equal = criteria.equal.get(this.idField)
    if (!equal) return undefined
    return {
      sequence: this.table().getAll(this.r.args(equal.values)) as RStream<Data>,
      used: [equal.part],
      score: Infinity
    }
  }

  /** Reading `index` for the filter: equality on its leading fields, then a range on the next one. */
  private access(index: IndexSpec, criteria: Criteria): Access | undefined {
    const { fields } = index
    let equal = 0
    while (equal < fields.length && criteria.equal.has(fields[equal]!)) equal++
    const lists = fields.slice(0, equal).map((field) => criteria.equal.get(field)!)
    if (equal === fields.length) {
      const keys = combinations(lists.map((list) => list.values))
      if (keys.length > MAX_KEYS) return undefined
      const args = fields.length === 1 ? keys.map((key) => key[0]!) : keys
      return {
        sequence: this.table().getAll(this.r.args(args as Key[]), { index: index.name }) as RStream<Data>,
        used: lists.map((list) => list.part),
        score: 2 * equal
      }
    }
    let prefix = 0
    while (prefix < equal && lists[prefix]!.values.length === 1) prefix++
    const range = criteria.ranges.get(fields[prefix]!)
    if (prefix === 0 && !range) return undefined
    if (!fields.slice(prefix + (range ? 1 : 0)).every((field) => criteria.indexed(field))) return undefined
    const used = [...lists.slice(0, prefix).map((list) => list.part), ...(range?.parts ?? [])]
    return { sequence: this.between(index, criteria, prefix, range), used, score: 2 * prefix + (range ? 1 : 0) }
  }

  /** Reading `index` in its order for the first sort keys (all in one direction). */
  private orderedAccess(index: IndexSpec, criteria: Criteria, sort: StoreQuery['sort']): OrderedAccess | undefined {
    const { fields } = index
    let prefix = 0
    while (prefix < fields.length && criteria.single(fields[prefix]!) !== undefined) prefix++
    const direction = sort[0]![1]
    let components = 0
    while (
      prefix + components < fields.length &&
      components < sort.length &&
      sort[components]![0] === fields[prefix + components] &&
      sort[components]![1] === direction &&
      criteria.ordered(fields[prefix + components]!)
    )
      components++
    if (components === 0 || !fields.slice(prefix + components).every((field) => criteria.indexed(field)))
      return undefined
    // Ties of an index come in primary-key order, in the direction it is read.
    const byKey =
      prefix + components === fields.length &&
      sort[components]?.[0] === this.idField &&
      sort[components]?.[1] === direction
    const range = criteria.ranges.get(fields[prefix]!)
    const sequence = prefix > 0 || range ? this.between(index, criteria, prefix, range) : this.table()
    const used = [...fields.slice(0, prefix).map((field) => criteria.equal.get(field)!.part), ...(range?.parts ?? [])]
    return {
      sequence: sequence.orderBy({
        index: direction === 1 ? this.r.asc(index.name) : this.r.desc(index.name)
      }) as RStream<Data>,
      used,
      score: 2 * prefix + (range ? 1 : 0),
      order: { index, prefix, components, served: byKey ? sort.length : components }
    }
  }

  /**
   * A sort only partly read from an index: the first `skip + limit` rows in index order hold every
   * row before the last one's index value; the rows sharing that value come from the index too, and
   * that small set is sorted by every key. One round trip.
   */
  private boundary(plan: OrderedAccess, rows: RStream<Data>, criteria: Criteria, query: StoreQuery): RStream<Data> {
    const { r } = this
    const { index, prefix, components } = plan.order
    const count = query.skip + query.limit!
    const fields = index.fields.slice(prefix, prefix + components)
    // Several fields are a JavaScript array of terms: r.expr makes it one term to compare.
    const valueOf = (row: RDatum) => r.expr(indexValue(row, fields))
    const head = r.expr(rows.limit(count).coerceTo('array')).do(((found: RDatum<Data[]>) =>
      r.branch(
        found.count().lt(count),
        found,
        found
          .nth(-1)
          .do((last: RDatum) =>
            found
              .filter((row: RDatum) => valueOf(row).ne(valueOf(last)))
              .union(this.compiler.filter(this.equalTo(plan, criteria, last), criteria.without(plan.used)) as never)
          )
      )) as never)
    return skipLimitSelect(
      (head as unknown as RStream<Data>).orderBy(...this.compiler.orderings(query.sort)),
      query,
      this.idField
    )
  }

  /** The rows whose sorted index fields equal `row`'s, under the same equality prefix. */
  private equalTo(plan: OrderedAccess, criteria: Criteria, row: RDatum): RStream<Data> {
    const { fields, name } = plan.order.index
    const prefix = fields.slice(0, plan.order.prefix).map((field) => criteria.single(field)!)
    const served = fields
      .slice(plan.order.prefix, plan.order.prefix + plan.order.components)
      .map((field) => indexValue(row, [field]))
    const rest = fields.length - plan.order.prefix - plan.order.components
    if (rest === 0) {
      const key = fields.length === 1 ? served[0]! : this.r.expr([...prefix, ...served])
      return this.table().getAll(key as never, { index: name }) as RStream<Data>
    }
    const bounds = (end: unknown) => [...prefix, ...served, ...Array.from({ length: rest }, () => end)]
    return this.table().between(bounds(this.r.minval), bounds(this.r.maxval), { index: name }) as RStream<Data>
  }

  /**
   * `between` on `index`: equal to the single values of its first `prefix` fields, then within the
   * range of the next one (bounds that hold every value of the range's kind and nothing else),
   * then anything.
   */
  private between(index: IndexSpec, criteria: Criteria, prefix: number, range: Range | undefined): RStream<Data> {
    const { r } = this
    const { fields } = index
    const fixed = fields.slice(0, prefix).map((field) => criteria.single(field)!)
    const rest = fields.length - prefix - 1
    const fill = (end: unknown) => Array.from({ length: rest }, () => end)
    const lowest = range?.kind === 'number' ? -Number.MAX_VALUE : ''
    const highest = range?.kind === 'number' ? Number.MAX_VALUE : r.maxval
    // With more fields after the range, an open bound is the value followed by the far end of the rest.
    const lower = !range
      ? [...fixed, r.minval, ...fill(r.minval)]
      : [...fixed, range.lower?.value ?? lowest, ...fill(range.lower?.open ? r.maxval : r.minval)]
    const upper = !range
      ? [...fixed, r.maxval, ...fill(r.maxval)]
      : [...fixed, range.upper?.value ?? highest, ...fill(range.upper?.open ? r.minval : r.maxval)]
    const unwrap = (key: unknown[]) => (fields.length === 1 ? key[0] : key)
    return this.table().between(unwrap(lower), unwrap(upper), {
      index: index.name,
      leftBound: range?.lower?.open && rest === 0 ? 'open' : 'closed',
      rightBound: range?.upper?.open && rest === 0 ? 'open' : 'closed'
    }) as RStream<Data>
  }
}

/**
 * The position of a cursor chain over `keys` sort keys (its last branch fixes every key but the
 * last, which it bounds), or undefined when `part` is no such chain.
 */
function positionOf(part: Filter, keys: number): Scalar[] | undefined {
  if (part.op !== 'or') return undefined
  const last = part.filters.at(-1)!
  if (last.op !== 'and' || last.filters.length !== keys) return undefined
  const values = last.filters.map((filter) => ('value' in filter ? filter.value : undefined))
  return values.every((value) => typeof value === 'number' || typeof value === 'string')
    ? (values as Scalar[])
    : undefined
}

/**
 * Whether two pieces of plain data (filters: objects, arrays, scalars) are equal, member by member: what comparing
 * their JSON says, without writing it (a cursor page's planning compared the text of each criterion 8 µs a page).
 */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every((key) => sameData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
}

/** Whether the field holds only values of `value`'s kind. */
function sameKind(shape: FieldShape | undefined, value: Scalar): boolean {
  return shape !== undefined && shape.kinds.size === 1 && shape.kinds.has(typeof value as Kind)
}

/**
 * The highest score; between ordered reads of equal score, the one serving more sort keys, then the index of
 * fewer fields: read in order, RethinkDB evaluates the index function on every row it passes (to merge its
 * shards), and a one-field function costs less per row than a compound one (BENCHMARKS.md, cursor pagination).
 */
function best(candidates: (Access | undefined)[]): Access | undefined {
  let chosen: Access | undefined
  for (const candidate of candidates) {
    if (!candidate) continue
    if (!chosen || candidate.score > chosen.score || (candidate.score === chosen.score && better(candidate, chosen)))
      chosen = candidate
  }
  return chosen
}

/** Between ordered reads of equal score: serving more sort keys, or as many through an index of fewer fields. */
function better(candidate: Access, chosen: Access): boolean {
  const served = candidate.order?.served ?? 0
  const chosenServed = chosen.order?.served ?? 0
  if (served !== chosenServed) return served > chosenServed
  return served > 0 && candidate.order!.index.fields.length < chosen.order!.index.fields.length
}

/** Every tuple taking one value from each list, in order. */
function combinations(lists: Key[][]): Key[][] {
  return lists.reduce<Key[][]>(
    (tuples, list) => tuples.flatMap((tuple) => list.map((value) => [...tuple, value])),
    [[]]
  )
}
