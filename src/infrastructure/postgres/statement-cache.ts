import { assertNever, type Filter, type StoreQuery } from '../../domain/query/ast.js'
import { jsonList, jsonText, parameter, Parameters } from './sql-compiler.js'

/**
 * A query's shape: what the text of its statement depends on — operators, field names (which are in
 * the text), the direction of each sort, which values are null, the JSON type of a range's bound,
 * whether there is a limit or an offset — and its parameters' values, in the order SqlCompiler adds
 * them: the filter's (`where`), then the page's (`LIMIT`, `OFFSET`). Two queries of one shape compile
 * to the same text with their own values.
 */
export interface QueryShape {
  key: string
  values: unknown[]
}

/** The shape of `query` (`paged`: with its page clause; without, the filter's alone, as a count reads it). */
export function queryShape(query: StoreQuery, paged: boolean): QueryShape {
  const values: unknown[] = []
  let key = filterShape(query.filter, values)
  if (!paged || (query.sort.length === 0 && query.limit === undefined && query.skip === 0)) return { key, values }
  key += '|'
  if (query.limit !== undefined) {
    values.push(query.limit)
    key += 'l'
  }
  if (query.skip > 0) {
    values.push(query.skip)
    key += 'o'
  }
  for (const [name, direction] of query.sort) key += `${direction === 1 ? '+' : '-'}${fieldKey(name)}`
  return { key, values }
}

/**
 * What `SqlCompiler.where` reads of each condition, and the values it adds, in its order. A null
 * test adds nothing (its text depends on the field alone); `$search` adds nothing (relaxed: TRUE).
 */
function filterShape(filter: Filter, values: unknown[]): string {
  switch (filter.op) {
    case 'and':
    case 'or': {
      let key = `${filter.op}(`
      for (const part of filter.filters) key += `${filterShape(part, values)},`
      return `${key})`
    }
    case 'eq':
    case 'ne':
      if (filter.value === null) return `${filter.op}${fieldKey(filter.field)}n`
      values.push(jsonText(filter.value))
      return `${filter.op}${fieldKey(filter.field)}v`
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      const bound = filter.value
      if (bound === null) return `${filter.op}${fieldKey(filter.field)}n`
      values.push(typeof bound === 'string' ? parameter(bound) : jsonText(bound))
      return `${filter.op}${fieldKey(filter.field)}${typeof bound}`
    }
    case 'in':
    case 'nin': {
      const listed = jsonList(filter.values)
      if (listed.length > 0) values.push(listed)
      const nulls = listed.length < filter.values.length
      return `${filter.op}${fieldKey(filter.field)}${listed.length > 0 ? 'v' : ''}${nulls ? 'n' : ''}`
    }
    case 'search':
      return 'search'
    case 'contains': {
      const value = filter.value
      const scalar = value === null || typeof value !== 'object'
      values.push(jsonText(scalar ? [value] : value))
      return `contains${fieldKey(filter.field)}${scalar ? 's' : 'o'}`
    }
    default:
      return assertNever(filter)
  }
}

/** A field name in a key, its length first: no name can pass for another or for the key's punctuation. */
function fieldKey(name: string): string {
  return `${name.length}:${name}`
}

/**
 * The statements of one table by query shape: a statement's text is compiled at the first query of
 * its shape and reused after (compiling it again costs more than reading the values: in the
 * bench's sorted find, 20 µs of CPU per call against the 130 µs of the whole call). Bounded: field
 * names come from clients, so when `limit` shapes are held the cache starts again empty.
 */
export class StatementCache {
  private readonly texts = new Map<string, string>()

  constructor(private readonly limit = 256) {}

  /**
   * The text and values of a statement for a query of `shape`; `compile` builds the text with
   * SqlCompiler, adding exactly the shape's values in order. A text whose parameters differ from the
   * shape's values (a shape that missed a case of the compiler) is used once with its own values and
   * never kept, so a gap in queryShape costs speed, never a wrong answer.
   */
  statement(kind: string, shape: QueryShape, compile: (params: Parameters) => string): Statement {
    const key = `${kind} ${shape.key}`
    const text = this.texts.get(key)
    if (text !== undefined) return { text, values: shape.values }
    const params = new Parameters()
    const compiled = compile(params)
    if (!sameValues(params.values, shape.values)) return { text: compiled, values: params.values }
    if (this.texts.size >= this.limit) this.texts.clear()
    this.texts.set(key, compiled)
    return { text: compiled, values: shape.values }
  }
}

export interface Statement {
  text: string
  values: unknown[]
}

/** Parameters are strings, numbers and lists of JSON texts. */
function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  return (
    a.length === b.length &&
    a.every((value, index) => {
      const other = b[index]
      if (!Array.isArray(value)) return value === other
      return Array.isArray(other) && sameValues(value, other)
    })
  )
}
