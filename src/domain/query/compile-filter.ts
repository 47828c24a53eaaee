import { assertNever, isMatchAll, type Filter } from './ast.js'
import { fieldGetter, type Doc } from './field-getter.js'
import type { PatternCompiler } from './pattern-compiler.js'

export type Predicate = (record: Doc) => boolean

/**
 * The reference query evaluator: compiles a filter into one predicate per query (closures built once,
 * then run per record). The memory store evaluates queries with it, the PostgreSQL store what SQL cannot
 * (`$search`), and the database compilers (sql-compiler.ts, reql-compiler.ts) must agree with it.
 * `$search` needs a `compilePattern` (the stores pass the RE2 engine of src/infrastructure/store-commons).
 * Semantics shared with every adapter: equality with null matches null and missing fields; range
 * operators compare only values of the same type.
 */
export function compileFilter(filter: Filter, compilePattern?: PatternCompiler): Predicate {
  switch (filter.op) {
    case 'and': {
      // Match-all parts (a cursor's filter wraps the query's, which often is one) cost nothing.
      const parts = filter.filters
        .filter((part) => !isMatchAll(part))
        .map((part) => compileFilter(part, compilePattern))
      if (parts.length === 1) return parts[0]!
      if (parts.length === 2) {
        const [first, second] = parts as [Predicate, Predicate]
        return (record) => first(record) && second(record)
      }
      return (record) => parts.every((part) => part(record))
    }
    case 'or': {
      const parts = filter.filters.map((part) => compileFilter(part, compilePattern))
      if (parts.length === 2) {
        const [first, second] = parts as [Predicate, Predicate]
        return (record) => first(record) || second(record)
      }
      return (record) => parts.some((part) => part(record))
    }
    case 'eq': {
      const get = fieldGetter(filter.field)
      const expected = filter.value
      if (expected === null) return (record) => get(record) == null
      if (typeof expected !== 'object') return (record) => get(record) === expected
      return (record) => valuesEqual(get(record), expected)
    }
    case 'ne': {
      const get = fieldGetter(filter.field)
      const expected = filter.value
      if (expected === null) return (record) => get(record) != null
      return (record) => !valuesEqual(get(record), expected)
    }
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      const get = fieldGetter(filter.field)
      const bound = filter.value
      const type = typeof bound
      if (bound === null) return () => false
      const test = RANGE_TESTS[filter.op]
      return (record) => {
        const actual = get(record)
        return typeof actual === type && test(actual as string, bound as string)
      }
    }
    case 'in':
    case 'nin': {
      const get = fieldGetter(filter.field)
      const scalars = new Set<unknown>(filter.values.filter((value) => value === null || typeof value !== 'object'))
      const objects = filter.values.filter((value) => value !== null && typeof value === 'object')
      const hasNull = scalars.has(null)
      const member = (actual: unknown): boolean =>
        actual == null ? hasNull : scalars.has(actual) || objects.some((value) => valuesEqual(actual, value))
      return filter.op === 'in' ? (record) => member(get(record)) : (record) => !member(get(record))
    }
    case 'search': {
      if (!compilePattern) throw new Error('This store cannot evaluate $search: no pattern engine configured')
      const get = fieldGetter(filter.field)
      const matches = compilePattern(filter.pattern)
      return (record) => {
        const actual = get(record)
        return typeof actual === 'string' && matches(actual)
      }
    }
    case 'contains': {
      const get = fieldGetter(filter.field)
      const expected = filter.value
      return (record) => {
        const actual = get(record)
        return Array.isArray(actual) && actual.some((item) => valuesEqual(item, expected))
      }
    }
    default:
      return assertNever(filter)
  }
}

const RANGE_TESTS = {
  lt: (a: string, b: string) => a < b,
  lte: (a: string, b: string) => a <= b,
  gt: (a: string, b: string) => a > b,
  gte: (a: string, b: string) => a >= b
} as const

/** Deep equality of JSON values. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const other = b as unknown[]
    return a.length === other.length && a.every((item, index) => valuesEqual(item, other[index]))
  }
  const left = a as Doc
  const right = b as Doc
  const keys = Object.keys(left)
  return (
    keys.length === Object.keys(right).length && keys.every((key) => key in right && valuesEqual(left[key], right[key]))
  )
}
