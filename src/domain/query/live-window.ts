import type { StoreQuery } from './ast.js'
import { compileFilter, type Predicate } from './compile-filter.js'
import { compareValues, compileSort, type Comparator } from './compile-sort.js'
import type { Doc } from './field-getter.js'
import type { PatternCompiler } from './pattern-compiler.js'

/** One change of a live result, in the order a client applies them to its copy of the window. */
export type WindowChange =
  /** Insert `record` at `index`. */
  | { type: 'added'; record: Doc; index: number }
  /** Take the record out of `oldIndex`, put `record` (its new value) at `index` (the same place if it did not move). */
  | { type: 'changed'; record: Doc; index: number; oldIndex: number }
  /** Remove the record at `oldIndex`. */
  | { type: 'removed'; record: Doc; oldIndex: number }

/** What the window did with a write: the changes for its subscribers, and whether it must be read again. */
export interface WindowUpdate {
  changes: WindowChange[]
  /**
   * The records it knows ran out before the window's end while more may exist in the store: read the query again
   * (`reset` with a fresh read) before trusting the window — the changes so far are still correct.
   */
  refill: boolean
}

/**
 * The result of one `find` kept up to date by the writes it hears, without asking the store again: a top-N window
 * (`$skip`, `$limit`, `$sort`) over the records that match its filter. It holds the sorted prefix of matching
 * records up to the window's end plus a buffer beyond it, so that a record leaving the window is replaced by the next
 * one it already knows; only when the buffer runs dry must the query be read again (`refill`). Records sort by the
 * query's keys and then by id, so that ties have one order everywhere.
 *
 * Pure and synchronous: the live query service feeds it the store's changes in the event log's order.
 */
export class LiveWindow {
  private readonly matches: Predicate
  private readonly compare: Comparator
  /** The first matching records in order: the ones before the window (`$skip`), the window, then the buffer. */
  private rows: Doc[] = []
  /** Their ids, in the same order: a write finds its record without reading every row. */
  private ids: unknown[] = []
  /** Whether `rows` holds every matching record (the last read returned fewer than it asked for). */
  private complete = false

  constructor(
    readonly query: StoreQuery,
    private readonly idField: string,
    /** How many records beyond the window to keep, so that removals refill it without a read. */
    readonly buffer: number,
    compilePattern?: PatternCompiler
  ) {
    this.matches = compileFilter(query.filter, compilePattern)
    const bySort = compileSort(query.sort)
    this.compare = (a, b) => bySort(a, b) || compareValues(a[idField], b[idField])
  }

  /** How many records to read for a (re)fill: everything before the window's end, and the buffer. */
  get readLimit(): number | undefined {
    return this.query.limit === undefined ? undefined : this.query.skip + this.query.limit + this.buffer
  }

  /**
   * Starts over from a read of the query (sorted by it, at most `readLimit` records, `$skip` not applied). Answers the
   * changes from the window as it was to the window as read (all `added` for the first read).
   */
  reset(read: Doc[]): WindowChange[] {
    const before = this.window()
    this.rows = [...read].sort(this.compare)
    this.ids = this.rows.map((row) => row[this.idField])
    const limit = this.readLimit
    this.complete = limit === undefined || read.length < limit
    return diff(before, this.window(), this.idField)
  }

  /** The window: what `find` with this query answers now (before `$select`). */
  window(): Doc[] {
    const { skip, limit } = this.query
    return this.rows.slice(skip, limit === undefined ? undefined : skip + limit)
  }

  /** Whether the window holds the record with this id. */
  has(id: unknown): boolean {
    const at = this.ids.indexOf(id)
    const { skip, limit } = this.query
    return at >= skip && (limit === undefined || at < skip + limit)
  }

  /** How many records it holds: before the window, in it, and in the buffer. */
  get size(): number {
    return this.rows.length
  }

  /** The record with this id among those it knows (before the window, in it, or in the buffer). */
  known(id: unknown): Doc | undefined {
    const at = this.ids.indexOf(id)
    return at < 0 ? undefined : this.rows[at]
  }

  /** The ids of the records it knows (before the window, in it, and in the buffer). */
  held(): unknown[] {
    return [...this.ids]
  }

  /** The records it knows, in order (before the window, in it, and in the buffer). */
  knownRows(): Doc[] {
    return [...this.rows]
  }

  /** Whether record `a` comes before record `b` in the window's order (its sort keys, then the id). */
  before(a: Doc, b: Doc): boolean {
    return this.compare(a, b) < 0
  }

  /** Whether a record matches the query's filter. */
  accepts(record: Doc): boolean {
    return this.matches(record)
  }

  /** Whether it knows a record with this id (before the window, in it, or in the buffer). */
  knows(id: unknown): boolean {
    return this.ids.includes(id)
  }

  /**
   * Applies one write: `record` is the record's value after it (undefined when removed), `id` the record's id.
   */
  apply(id: unknown, record: Doc | undefined): WindowUpdate {
    const { skip, limit } = this.query
    const end = limit === undefined ? Infinity : skip + limit
    const before = this.rows.slice(skip, end)
    const at = this.ids.indexOf(id)
    if (at >= 0) {
      this.rows.splice(at, 1)
      this.ids.splice(at, 1)
    }
    const to = record !== undefined && this.matches(record) ? this.insert(id, record) : -1
    // A known record left and the buffer no longer covers the window's end: unknown records may belong in it.
    const refill = !this.complete && this.rows.length < end
    const after = this.rows.slice(skip, end)
    // Rows are told apart by their place in the rows before the write (the written record by its old place, or -1 when
    // it is new): the changes come from the positions alone, without reading the records.
    const place = (row: number) => {
      if (row === to) return at
      const shifted = to >= 0 && row > to ? row - 1 : row
      return at >= 0 && shifted >= at ? shifted + 1 : shifted
    }
    const beforeKeys = before.map((_, index) => skip + index)
    const afterKeys = after.map((_, index) => place(skip + index))
    return { changes: diffKeyed(before, beforeKeys, after, afterKeys), refill }
  }

  /**
   * Puts a matching record in its place and answers the place; past the known prefix of an incomplete read, it is
   * not known to belong (-1).
   */
  private insert(id: unknown, record: Doc): number {
    let low = 0
    let high = this.rows.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.compare(this.rows[middle]!, record) < 0) low = middle + 1
      else high = middle
    }
    if (low === this.rows.length && !this.complete) return -1
    this.rows.splice(low, 0, record)
    this.ids.splice(low, 0, id)
    // The buffer stays bounded: the record that falls off the end is beyond what the window can need.
    const limit = this.readLimit
    if (limit !== undefined && this.rows.length > limit) {
      this.rows.length = limit
      this.ids.length = limit
      this.complete = false
    }
    return low
  }
}

/**
 * The changes that turn `before` into `after`, for a client that applies them one by one: removals first (from the
 * end, so earlier indexes stay true), then, position by position, additions and moves; a record still in place
 * whose value changed is `changed` with `index === oldIndex`.
 */
export function diff(before: Doc[], after: Doc[], idField: string): WindowChange[] {
  return diffKeyed(
    before,
    before.map((row) => row[idField]),
    after,
    after.map((row) => row[idField])
  )
}

/** `diff` with the records told apart by keys given beside them (a row keeps its key; `!==` tells a new value). */
function diffKeyed(before: Doc[], beforeKeys: unknown[], after: Doc[], afterKeys: unknown[]): WindowChange[] {
  const changes: WindowChange[] = []
  const kept = new Set(afterKeys)
  const rows = [...before]
  const keys = [...beforeKeys]
  for (let index = rows.length - 1; index >= 0; index--) {
    if (kept.has(keys[index])) continue
    changes.push({ type: 'removed', record: rows[index]!, oldIndex: index })
    rows.splice(index, 1)
    keys.splice(index, 1)
  }
  for (let index = 0; index < after.length; index++) {
    const row = after[index]!
    const key = afterKeys[index]
    if (index < keys.length && keys[index] === key) {
      if (rows[index] !== row) changes.push({ type: 'changed', record: row, index, oldIndex: index })
      rows[index] = row
      continue
    }
    const from = keys.indexOf(key, index + 1)
    if (from >= 0) {
      rows.splice(from, 1)
      keys.splice(from, 1)
      changes.push({ type: 'changed', record: row, index, oldIndex: from })
    } else changes.push({ type: 'added', record: row, index })
    rows.splice(index, 0, row)
    keys.splice(index, 0, key)
  }
  return changes
}

/** Applies changes to a copy of a window, as a client does: the other half of `diff`, for tests and clients. */
export function applyChanges(window: readonly Doc[], changes: readonly WindowChange[]): Doc[] {
  const rows = [...window]
  for (const change of changes) {
    if (change.type === 'removed') rows.splice(change.oldIndex, 1)
    else if (change.type === 'added') rows.splice(change.index, 0, change.record)
    else {
      rows.splice(change.oldIndex, 1)
      rows.splice(change.index, 0, change.record)
    }
  }
  return rows
}

/** Whether two values are equal as JSON data (records from a store or the wire): a write that changes nothing. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime()
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every(
    (key) =>
      Object.hasOwn(b, key) && sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])
  )
}
