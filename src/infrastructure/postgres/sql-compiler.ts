import { BadRequest } from '../../domain/errors/errors.js'
import { assertNever, type Filter, type StoreQuery, type Value } from '../../domain/query/ast.js'
import { onlyKinds, UNKNOWN_SHAPES, type FieldShapes } from '../../domain/schema/field-shapes.js'
import { pgDriver } from './pg-driver.js'

/**
 * The parameters of one statement: every value of a query goes in as a parameter (`$n`), never into
 * the SQL text. Field names go into the text as string literals (see `path`).
 */
export class Parameters {
  readonly values: unknown[] = []

  /** `$n` for `value`, cast to `type`. */
  add(value: unknown, type: string): string {
    this.values.push(parameter(value))
    return `$${this.values.length}::${type}`
  }
}

/** `value` as a parameter: text with a NUL character is refused (PostgreSQL cannot hold it). */
export function parameter<V>(value: V): V {
  if (typeof value === 'string' && value.includes('\0'))
    throw new BadRequest('Query values cannot contain the NUL character')
  return value
}

/**
 * The path of a field in a statement's text, ` -> 'a' -> 'b'` (`->>` into the last segment when
 * `text`): each segment a string literal quoted by node-postgres's escapeLiteral (quotes doubled; with a
 * backslash, an `E''` string with backslashes doubled), so a name is read as the one string it is and
 * nothing in it — quotes, backslashes, `$1`, comment marks — can end the literal. It is the form the
 * declared expression indexes are created with (PostgresStore), so they match in any plan, prepared or
 * not. A name with the NUL character, which PostgreSQL text cannot hold, is a 400.
 */
export function path(name: string, text = false): string {
  const literal = pgDriver().escapeLiteral
  const parts = name.split('.')
  let written = ''
  for (const [index, part] of parts.entries()) {
    if (part.includes('\0')) throw new BadRequest('Field names cannot contain the NUL character')
    written += `${text && index === parts.length - 1 ? ' ->> ' : ' -> '}${literal(part)}`
  }
  return written
}

/**
 * Compiles the query AST to SQL over a table of `(key text, doc jsonb)` rows with the semantics of
 * the reference evaluator the memory store runs (src/domain/query/compile-filter.ts and compile-sort.ts):
 *
 * - a field is `doc -> 'a' -> 'b'`: `->` with a text key never enters an array and answers SQL NULL
 *   for a missing field, so `'tags.0'` reads as missing, as in memory;
 * - equality is jsonb equality (deep, strict types: the string "25" is not the number 25); `= null`
 *   also matches missing fields, `$ne`/`$nin` match them;
 * - ranges compare values of the bound's JSON type only, strings by code point (`COLLATE "C"`);
 * - `$search` is not compiled: `relaxed` makes it TRUE, and the store applies the RE2 pattern to
 *   what the rest of the filter selected (see PostgresStore).
 *
 * Fields of a declared type (`shapes`, read from the records' schema) drop what only mixed kinds
 * need: a number bound on a numbers-only field is a bare jsonb comparison (jsonb orders numbers as
 * numbers, and the expression index on the field serves it), and a sort on a field of one kind is
 * one key instead of four (a required number sorts by the jsonb value itself, in the order of its
 * index). A bound of another type than the declared one keeps the general, type-guarded form. The
 * schema is a promise: a record that breaks it (written around the service) may be matched or
 * sorted differently than the memory store would, never with an error.
 */
export class SqlCompiler {
  constructor(
    private readonly shapes: FieldShapes = UNKNOWN_SHAPES,
    private readonly doc = 'doc'
  ) {}

  /** The WHERE condition of `filter`. `relaxed`: `$search` conditions count as true. */
  where(filter: Filter, params: Parameters, relaxed = false): string {
    switch (filter.op) {
      case 'and':
      case 'or': {
        if (filter.filters.length === 0) return filter.op === 'and' ? 'TRUE' : 'FALSE'
        const parts = filter.filters.map((part) => this.where(part, params, relaxed))
        return parts.length === 1 ? parts[0]! : `(${parts.join(filter.op === 'and' ? ' AND ' : ' OR ')})`
      }
      case 'eq':
        return filter.value === null
          ? this.isNull(filter.field)
          : `${this.field(filter.field)} = ${json(filter.value, params)}`
      case 'ne':
        return filter.value === null
          ? `NOT ${this.isNull(filter.field)}`
          : `${this.field(filter.field)} IS DISTINCT FROM ${json(filter.value, params)}`
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte': {
        const bound = filter.value
        if (bound === null) return 'FALSE'
        const field = this.field(filter.field)
        const operator = RANGE[filter.op]
        const shape = this.shapes(filter.field)
        if (typeof bound === 'string') {
          const text = `(${field} #>> '{}') COLLATE "C" ${operator} ${params.add(bound, 'text')}`
          // `#>>` reads a JSON null as SQL NULL, which no range matches: no guard for strings and nulls.
          return onlyKinds(shape, 'string', 'null') ? text : `(jsonb_typeof(${field}) = 'string' AND ${text})`
        }
        // A JSON null sorts below every number in jsonb: only a field that is never null drops the guard.
        if (typeof bound === 'number' && onlyKinds(shape, 'number'))
          return `${field} ${operator} ${json(bound, params)}`
        return `(jsonb_typeof(${field}) = '${typeof bound}' AND ${field} ${operator} ${json(bound, params)})`
      }
      case 'in':
      case 'nin': {
        const values = filter.values.filter((value) => value !== null)
        const parts = values.length > 0 ? [`${this.field(filter.field)} = ANY(${this.list(values, params)})`] : []
        if (values.length < filter.values.length) parts.unshift(this.isNull(filter.field))
        const member = parts.length === 0 ? 'FALSE' : parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`
        return filter.op === 'in' ? member : `NOT coalesce(${member}, FALSE)`
      }
      case 'search':
        if (relaxed) return 'TRUE'
        throw new Error('$search is applied by the store, never compiled to SQL')
      case 'contains': {
        const field = this.field(filter.field)
        const value = filter.value
        // Containment of a one-element array is exact for scalars only: `[[1,2]] @> [[1]]` holds.
        if (value === null || typeof value !== 'object')
          return `(jsonb_typeof(${field}) = 'array' AND ${field} @> ${json([value], params)})`
        return `(jsonb_typeof(${field}) = 'array' AND EXISTS (SELECT 1 FROM jsonb_array_elements(${field}) AS item(value) WHERE item.value = ${json(value, params)}))`
      }
      default:
        return assertNever(filter)
    }
  }

  /** ORDER BY, LIMIT and OFFSET of a page: ordered whenever sorted or paged, so pages never overlap. */
  pageClause(query: StoreQuery, params: Parameters): string {
    if (query.sort.length === 0 && query.limit === undefined && query.skip === 0) return ''
    const limit = query.limit === undefined ? '' : ` LIMIT ${params.add(query.limit, 'bigint')}`
    const offset = query.skip > 0 ? ` OFFSET ${params.add(query.skip, 'bigint')}` : ''
    return ` ORDER BY ${this.orderBy(query.sort)}${limit}${offset}`
  }

  /**
   * ORDER BY for `sort`, in the memory store's order of kinds: null and missing, numbers, strings
   * (by code point), booleans, arrays, objects (arrays and objects are not compared among
   * themselves); ties, and unsorted queries, by the record's key, so that pages never overlap.
   */
  orderBy(sort: StoreQuery['sort']): string {
    const keys = sort.flatMap(([name, direction]) => this.sortKeys(name, direction))
    return [...keys, 'key'].join(', ')
  }

  /**
   * The keys of one sorted field. Null and missing rank first ascending (last descending) and tie.
   * A field of one declared kind needs one key: its jsonb value (numbers, booleans: jsonb compares
   * them as such; a required number as is, so that its expression index gives the order) or its
   * text (strings, by code point). Any other field ranks kinds first, then compares within one.
   */
  private sortKeys(name: string, direction: 1 | -1): string[] {
    const order = direction === 1 ? 'ASC' : 'DESC'
    const nulls = direction === 1 ? 'NULLS FIRST' : 'NULLS LAST'
    const shape = this.shapes(name)
    if (onlyKinds(shape, 'string', 'null')) return [`${this.text(name)} COLLATE "C" ${order} ${nulls}`]
    const field = this.field(name)
    if (shape?.required && onlyKinds(shape, 'number')) return [`${field} ${order}`]
    if (onlyKinds(shape, 'number', 'null') || onlyKinds(shape, 'boolean', 'null'))
      return [`nullif(${field}, 'null'::jsonb) ${order} ${nulls}`]
    return [
      `CASE jsonb_typeof(${field}) WHEN 'number' THEN 1 WHEN 'string' THEN 2 WHEN 'boolean' THEN 3 WHEN 'array' THEN 5 WHEN 'object' THEN 6 ELSE 0 END ${order}`,
      `CASE WHEN jsonb_typeof(${field}) = 'number' THEN (${field})::numeric END ${order}`,
      `CASE WHEN jsonb_typeof(${field}) = 'string' THEN ${field} #>> '{}' END COLLATE "C" ${order}`,
      `CASE WHEN jsonb_typeof(${field}) = 'boolean' THEN (${field})::boolean END ${order}`
    ]
  }

  /** The field's value as jsonb (SQL NULL when missing); its path is in the text (see `path`). */
  field(name: string): string {
    return `(${this.doc}${path(name)})`
  }

  /** The field's value as text when it is a string (`->>` on the last segment; SQL NULL for a JSON null). */
  private text(name: string): string {
    return `(${this.doc}${path(name, true)})`
  }

  /** Whether the field may be null or missing in a record (false: the schema declares it present and not null). */
  mayBeNull(name: string): boolean {
    const shape = this.shapes(name)
    return !(shape?.required === true && !shape.kinds.has('null'))
  }

  /**
   * Whether the field is null or missing: never, for a field the schema declares present and not
   * null. Then a descending cursor's bound ("at most the value, or null") is a plain range the
   * planner reads from the field's expression index (`x <= $1 OR FALSE` folds to `x <= $1`),
   * rather than a filter over every record above the position.
   */
  private isNull(name: string): string {
    if (!this.mayBeNull(name)) return 'FALSE'
    const field = this.field(name)
    return `(${field} IS NULL OR ${field} = 'null'::jsonb)`
  }

  private list(values: Value[], params: Parameters): string {
    return params.add(jsonList(values), 'jsonb[]')
  }
}

const RANGE = { lt: '<', lte: '<=', gt: '>', gte: '>=' } as const

function json(value: Value, params: Parameters): string {
  return params.add(jsonText(value), 'jsonb')
}

/** The JSON text of a value parameter (`::jsonb`): PostgreSQL's jsonb cannot hold the NUL character either. */
export function jsonText(value: Value): string {
  // A finite number's JSON is its string form (JSON.stringify's own rule), without JSON.stringify's setup.
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  const text = JSON.stringify(value)
  if (text.includes('\\u0000')) throw new BadRequest('Query values cannot contain the NUL character')
  return text
}

/** The JSON texts of a list's values other than null (a `jsonb[]` parameter). */
export function jsonList(values: readonly Value[]): string[] {
  const texts: string[] = []
  for (const value of values) if (value !== null) texts.push(JSON.stringify(value))
  return texts
}

/** Whether the filter holds a `$search` (which the store applies after SQL selected the candidates). */
export function hasSearch(filter: Filter): boolean {
  if (filter.op === 'and' || filter.op === 'or') return filter.filters.some(hasSearch)
  return filter.op === 'search'
}
