import type { StoreQuery } from './ast.js'
import { fieldGetter, type Doc } from './field-getter.js'

export type Comparator = (a: Doc, b: Doc) => number

/**
 * Rank of a value's type in sort order, the type order of Feathers' sorter: null/missing < numbers <
 * strings < booleans < dates < arrays < objects (the RethinkDB adapter ranks its times as dates).
 */
function typeRank(value: unknown): number {
  if (value === null || value === undefined) return 0
  switch (typeof value) {
    case 'number':
      return 1
    case 'string':
      return 2
    case 'boolean':
      return 3
    default:
      return value instanceof Date ? 4 : Array.isArray(value) ? 5 : 6
  }
}

/**
 * Compares by type rank, then by value for numbers, strings, booleans and dates. Unlike Feathers,
 * two arrays or two objects compare as equal: they keep the order the records were stored in.
 */
export function compareValues(a: unknown, b: unknown): number {
  const rankA = typeRank(a)
  const rankB = typeRank(b)
  if (rankA !== rankB) return rankA - rankB
  if (rankA === 0 || rankA > 4) return 0
  const left = rankA === 4 ? (a as Date).getTime() : (a as number)
  const right = rankB === 4 ? (b as Date).getTime() : (b as number)
  return left < right ? -1 : left > right ? 1 : 0
}

/** A multi-key comparator; the first sort key has the highest priority. */
export function compileSort(sort: StoreQuery['sort']): Comparator {
  const keys = sort.map(([field, direction]) => ({ get: fieldGetter(field), direction }))
  if (keys.length === 1) {
    const { get, direction } = keys[0]!
    return (a, b) => direction * compareValues(get(a), get(b))
  }
  return (a, b) => {
    for (const { get, direction } of keys) {
      const order = compareValues(get(a), get(b))
      if (order !== 0) return direction * order
    }
    return 0
  }
}
