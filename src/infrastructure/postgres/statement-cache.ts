import { assertNever, type Filter, type StoreQuery } from '../../domain/query/ast.js'
import { jsonList, jsonText, parameter, Parameters } from './sql-compiler.js'

/**
 * A query's shape: what the text of its statement depends on — operators, field names (which are in
 * the text), the direction of each sort, which values are null, the JSON type of a range's bound,
 * whether there is a limit or an offset — as a list of tokens, and its parameters' values, in the
 * order SqlCompiler adds them: the filter's (`where`), then the page's (`LIMIT`, `OFFSET`). Two queries
 * of one shape compile to the same text with their own values.
 *
 * The tokens are the AST read in order, prefix first: an operator, then its field and a mark for its
 * value's kind; `and`/`or`, then their conditions and `)`; after the filter, `|`, a mark for the limit
 * and one for the offset, then a direction and a field name per sort key. What each token is follows
 * from the tokens before it, so no field name can pass for an operator, a mark or another name, and
 * two shapes never share a list. Tokens are the AST's own strings (field names as parsed, constant
 * marks), so making a shape builds no string and hashes none: the cache follows them through maps
 * (against a key string built, flattened and hashed per query: 4k instructions of the bench's sorted
 * find, whose whole call is about 165k).
 */
export interface QueryShape {
  tokens: string[]
  values: unknown[]
}

/** The shape of `query` (`paged`: with its page clause; without, the filter's alone, as a count reads it). */
export function queryShape(query: StoreQuery, paged: boolean): QueryShape {
  const tokens: string[] = []
  const values: unknown[] = []
  filterShape(query.filter, tokens, values)
  if (!paged || (query.sort.length === 0 && query.limit === undefined && query.skip === 0)) return { tokens, values }
  tokens.push('|')
  if (query.limit !== undefined) {
    values.push(query.limit)
    tokens.push('l')
  }
  if (query.skip > 0) {
    values.push(query.skip)
    tokens.push('o')
  }
  for (const [name, direction] of query.sort) tokens.push(direction === 1 ? '+' : '-', name)
  return { tokens, values }
}

/**
 * What `SqlCompiler.where` reads of each condition, and the values it adds, in its order. A null
 * test adds nothing (its text depends on the field alone); `$search` adds nothing (relaxed: TRUE).
 */
function filterShape(filter: Filter, tokens: string[], values: unknown[]): void {
  switch (filter.op) {
    case 'and':
    case 'or':
      tokens.push(filter.op)
      for (const part of filter.filters) filterShape(part, tokens, values)
      tokens.push(')')
      return
    case 'eq':
    case 'ne':
      if (filter.value === null) {
        tokens.push(filter.op, filter.field, 'n')
        return
      }
      values.push(jsonText(filter.value))
      tokens.push(filter.op, filter.field, 'v')
      return
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      const bound = filter.value
      if (bound === null) {
        tokens.push(filter.op, filter.field, 'n')
        return
      }
      values.push(typeof bound === 'string' ? parameter(bound) : jsonText(bound))
      tokens.push(filter.op, filter.field, typeof bound)
      return
    }
    case 'in':
    case 'nin': {
      const listed = jsonList(filter.values)
      if (listed.length > 0) values.push(listed)
      const nulls = listed.length < filter.values.length
      tokens.push(filter.op, filter.field, listed.length > 0 ? (nulls ? 'vn' : 'v') : nulls ? 'n' : '')
      return
    }
    case 'search':
      tokens.push('search')
      return
    case 'contains': {
      const value = filter.value
      const scalar = value === null || typeof value !== 'object'
      values.push(jsonText(scalar ? [value] : value))
      tokens.push('contains', filter.field, scalar ? 's' : 'o')
      return
    }
    default:
      return assertNever(filter)
  }
}

/** A step of the cache's trie: the text of the shape whose tokens end here, and the tokens that follow. */
interface Node {
  text?: string
  next?: Map<string, Node>
}

/**
 * The statements of one table by query shape: a statement's text is compiled at the first query of
 * its shape and reused after (compiling it again costs more than reading the values: in the
 * bench's sorted find, 20 µs of CPU per call against the 130 µs of the whole call). Kept in a trie of
 * the shapes' tokens under their kind. Bounded: field names come from clients, so when `limit` shapes
 * are held the cache starts again empty.
 */
export class StatementCache {
  private kinds = new Map<string, Node>()
  private size = 0

  constructor(private readonly limit = 256) {}

  /**
   * The text and values of a statement for a query of `shape`; `compile` builds the text with
   * SqlCompiler, adding exactly the shape's values in order. A text whose parameters differ from the
   * shape's values (a shape that missed a case of the compiler) is used once with its own values and
   * never kept, so a gap in queryShape costs speed, never a wrong answer.
   */
  statement(kind: string, shape: QueryShape, compile: (params: Parameters) => string): Statement {
    const tokens = shape.tokens
    let node = this.kinds.get(kind)
    for (let i = 0; node !== undefined && i < tokens.length; i++) node = node.next?.get(tokens[i]!)
    const text = node?.text
    if (text !== undefined) return { text, values: shape.values }
    const params = new Parameters()
    const compiled = compile(params)
    if (!sameValues(params.values, shape.values)) return { text: compiled, values: params.values }
    if (this.size >= this.limit) {
      this.kinds = new Map()
      this.size = 0
    }
    let at: Node | undefined = this.kinds.get(kind)
    if (at === undefined) this.kinds.set(kind, (at = {}))
    for (const token of tokens) {
      const next: Map<string, Node> = (at.next ??= new Map())
      let child: Node | undefined = next.get(token)
      if (child === undefined) next.set(token, (child = {}))
      at = child
    }
    at.text = compiled
    this.size++
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
