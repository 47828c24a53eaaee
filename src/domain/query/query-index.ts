import type { Filter, Value } from './ast.js'
import { fieldGetter, type Doc } from './field-getter.js'

/**
 * The equality a query's every match must satisfy, when it has one: a top-level `field = value` (or `field in
 * values`) that the query's filter requires. Such a query can only match records whose `field` holds one of `values`.
 */
export interface Anchor {
  field: string
  values: Value[]
}

/** The most selective-looking anchor of a filter (fewest values); undefined when it requires no equality. */
export function anchorOf(filter: Filter): Anchor | undefined {
  if (filter.op === 'eq' && isKey(filter.value)) return { field: filter.field, values: [filter.value] }
  if (filter.op === 'in' && filter.values.length > 0 && filter.values.every(isKey))
    return { field: filter.field, values: filter.values }
  if (filter.op !== 'and') return undefined
  let best: Anchor | undefined
  for (const part of filter.filters) {
    const anchor = anchorOf(part)
    if (anchor && (!best || anchor.values.length < best.values.length)) best = anchor
  }
  return best
}

/** Values an index can key on: scalars other than null (null also matches a missing field). */
function isKey(value: Value): boolean {
  return value !== null && typeof value !== 'object'
}

/** One key per scalar, distinct across types (1 and '1' are different values). */
const keyOf = (value: unknown): string | undefined =>
  value === null || value === undefined || typeof value === 'object' ? undefined : `${typeof value}:${String(value)}`

/**
 * Which of many queries a written record may concern, without testing each: queries are indexed by their anchor
 * (`room = 'a'` files the query under room/'a'), so a write looks up the values its record holds in the anchored
 * fields — a handful of map reads whatever the number of queries — plus the queries without an anchor, which are
 * tested one by one. The caller adds the queries that held the record before the write (its old value is not in the
 * change), and tests each candidate's full filter.
 */
export class QueryIndex<Q> {
  /** field → value key → queries anchored there. */
  private readonly anchored = new Map<string, { get: (record: Doc) => unknown; byValue: Map<string, Set<Q>> }>()
  private readonly unanchored = new Set<Q>()
  private readonly filed = new Map<Q, { field: string; keys: string[] } | undefined>()

  get size(): number {
    return this.filed.size
  }

  add(query: Q, filter: Filter): void {
    if (this.filed.has(query)) return
    const anchor = anchorOf(filter)
    if (!anchor) {
      this.unanchored.add(query)
      this.filed.set(query, undefined)
      return
    }
    let field = this.anchored.get(anchor.field)
    if (!field) this.anchored.set(anchor.field, (field = { get: fieldGetter(anchor.field), byValue: new Map() }))
    const keys = [...new Set(anchor.values.map((value) => keyOf(value)!))] // `$in: [a, a]` files it once
    for (const key of keys) {
      let queries = field.byValue.get(key)
      if (!queries) field.byValue.set(key, (queries = new Set()))
      queries.add(query)
    }
    this.filed.set(query, { field: anchor.field, keys })
  }

  delete(query: Q): void {
    if (!this.filed.has(query)) return
    const filed = this.filed.get(query)
    this.filed.delete(query)
    if (!filed) return void this.unanchored.delete(query)
    const field = this.anchored.get(filed.field)!
    for (const key of filed.keys) {
      const queries = field.byValue.get(key)!
      queries.delete(query)
      if (queries.size === 0) field.byValue.delete(key)
    }
    if (field.byValue.size === 0) this.anchored.delete(filed.field)
  }

  /** The queries a record with these values may match: anchored at one of its values, or anchored nowhere. */
  candidates(record: Doc): Set<Q> {
    const found = new Set(this.unanchored)
    for (const { get, byValue } of this.anchored.values()) {
      const key = keyOf(get(record))
      const queries = key === undefined ? undefined : byValue.get(key)
      if (queries) for (const query of queries) found.add(query)
    }
    return found
  }
}
