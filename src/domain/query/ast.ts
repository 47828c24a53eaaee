/**
 * The typed query every store receives (`StoreQuery`), parsed from the raw `params.query` (the
 * service contract's `Query`, src/domain/service/service.ts). Raw queries never reach an adapter.
 */
export type Scalar = string | number | boolean | null
export type Value = Scalar | Value[] | { [key: string]: Value }

export type Filter =
  | { op: 'and' | 'or'; filters: Filter[] }
  | { op: 'eq' | 'ne'; field: string; value: Value }
  | { op: 'lt' | 'lte' | 'gt' | 'gte'; field: string; value: Scalar }
  | { op: 'in' | 'nin'; field: string; values: Value[] }
  | { op: 'search'; field: string; pattern: string }
  | { op: 'contains'; field: string; value: Value }

export type SortDirection = 1 | -1

/** What a store is asked for: the filter, then sort, skip, limit and projection. */
export interface StoreQuery {
  filter: Filter
  /** In key order of the query: the first entry has the highest priority. */
  sort: [field: string, direction: SortDirection][]
  limit?: number
  skip: number
  select?: string[]
}

/** The filter that matches every record. */
export const MATCH_ALL: Filter = { op: 'and', filters: [] }

export const EMPTY_QUERY: StoreQuery = { filter: MATCH_ALL, sort: [], skip: 0 }

export function isMatchAll(filter: Filter): boolean {
  return filter.op === 'and' && filter.filters.length === 0
}

/** Exhaustiveness guard for `switch (filter.op)`: a new operator does not compile until handled. */
export function assertNever(value: never): never {
  throw new Error(`Unhandled query operator: ${JSON.stringify(value)}`)
}
