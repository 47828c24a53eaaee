import { BadRequest } from '../errors/errors.js'
import { isPlainObject, isRecord } from '../objects.js'
import type { Filter, Scalar, SortDirection, StoreQuery } from './ast.js'

/**
 * Keyset (cursor) pagination, once for every store: a cursor names a position in a sort order (the
 * sort keys' values of one record, then its id), and the page after it is the records the query
 * matches *beyond* that position — a filter every store already evaluates, so pages never repeat or
 * skip a record when others are inserted or removed in between, and a deep page costs what the
 * first one does wherever a store reads the leading sort key through an index.
 *
 * A cursor is opaque to clients: base64url JSON of the query's fingerprint and the position, then a
 * checksum. It is validated strictly: a cursor for another filter or sort, or an edited one, is a
 * 400 naming the problem. It is not a secret and needs none: its values are a record's sort keys,
 * which the page already showed, and a forged position only selects records the query allows.
 */

/** The query parameters of cursor pagination, taken out of a raw query before it is parsed. */
export interface CursorParameters {
  /** `$after`: the page following this cursor; '' starts at the beginning. */
  after?: string
  /** `$before`: the page preceding this cursor; '' starts at the end. */
  before?: string
  /** `$count: false` leaves `total` out of the page (no count of every match). */
  count: boolean
  /** Whether the query named any of them: only then does a page carry `next` and `prev`. */
  requested: boolean
}

/** A position in a sort order: each sort key's value, the id last. */
export type Position = Scalar[]

const VERSION = 1
const NAMES = ['$after', '$before', '$count'] as const

/**
 * Splits `$after`, `$before` and `$count` off a raw query (the rest is what parseQuery reads), and
 * checks them: cursors are strings, `$count` a boolean ("true"/"false" over REST), and a cursor
 * cannot be combined with `$skip` or with the other direction.
 */
export function takeCursorParameters(raw: unknown): { query: unknown; cursor: CursorParameters } {
  const cursor: CursorParameters = { count: true, requested: false }
  if (!isPlainObject(raw) || !NAMES.some((name) => raw[name] !== undefined)) return { query: raw, cursor }
  const { $after: after, $before: before, $count: count, ...query } = raw
  cursor.requested = true
  if (after !== undefined) cursor.after = cursorString('$after', after)
  if (before !== undefined) cursor.before = cursorString('$before', before)
  if (cursor.after !== undefined && cursor.before !== undefined)
    throw new BadRequest('Use either $after or $before, not both')
  if (count !== undefined) cursor.count = booleanOf(count)
  const skip = query.$skip
  if ((cursor.after || cursor.before) && skip !== undefined && skip !== 0 && skip !== '0')
    throw new BadRequest('$skip cannot be combined with a cursor ($after/$before): a cursor already names the position')
  return { query, cursor }
}

function cursorString(name: string, value: unknown): string {
  if (typeof value !== 'string') throw new BadRequest(`Invalid ${name}: expected a cursor string from a page`)
  return value
}

function booleanOf(value: unknown): boolean {
  if (value === true || value === 'true') return true
  if (value === false || value === 'false') return false
  throw new BadRequest(`Invalid $count: expected true or false, got ${JSON.stringify(value)}`)
}

/** The sort a keyset walks: the query's sort, ties broken by the id (ascending) unless it sorts by id already. */
export function keysetSort(sort: StoreQuery['sort'], idField: string): StoreQuery['sort'] {
  return sort.some(([field]) => field === idField) ? sort : [...sort, [idField, 1]]
}

/**
 * What a cursor is bound to: the filter and the keyset sort. A cursor minted for another query is
 * refused rather than silently positioning a different walk.
 */
export function fingerprint(filter: Filter, sort: StoreQuery['sort']): string {
  return checksum(JSON.stringify([filter, sort]))
}

/** The cursor of `record`'s position in `sort` (a keyset sort), for the query with `print`. */
export function encodeCursor(record: Record<string, unknown>, sort: StoreQuery['sort'], print: string): string {
  const position = sort.map(([field]) => {
    const value = valueAt(record, field)
    if (value === undefined || value === null) return null
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value
    throw new BadRequest(`Cannot page by cursor over '${field}': it holds an object or array, not a single value`)
  })
  const payload = toBase64Url(JSON.stringify([VERSION, print, position]))
  return `${payload}.${checksum(payload)}`
}

/** The position a cursor names; a 400 naming the problem when it is malformed, edited, or for another query. */
export function decodeCursor(cursor: string, sort: StoreQuery['sort'], print: string): Position {
  const dot = cursor.lastIndexOf('.')
  const payload = cursor.slice(0, dot)
  if (dot < 0 || !/^[A-Za-z0-9_-]+$/.test(payload) || checksum(payload) !== cursor.slice(dot + 1))
    throw new BadRequest('Invalid cursor: it is malformed or was modified; pass back a `next` or `prev` of a page')
  let decoded: unknown
  try {
    decoded = JSON.parse(fromBase64Url(payload))
  } catch {
    throw new BadRequest('Invalid cursor: it is malformed or was modified; pass back a `next` or `prev` of a page')
  }
  if (!Array.isArray(decoded) || decoded.length !== 3 || decoded[0] !== VERSION || typeof decoded[1] !== 'string')
    throw new BadRequest('Invalid cursor: unknown format; pass back a `next` or `prev` of a page')
  if (decoded[1] !== print)
    throw new BadRequest('Invalid cursor: it was made for another query or $sort; keep the query of the first page')
  const position: unknown = decoded[2]
  if (!Array.isArray(position) || position.length !== sort.length || !position.every(isScalar))
    throw new BadRequest('Invalid cursor: its position does not fit the $sort')
  return position as Position
}

/**
 * The records beyond `position` in `sort` (`forward`) or before it: for keys k1…kn, the union over
 * i of "k1…k(i-1) equal, ki beyond". The type order of every store ranks null and missing values
 * first, so an ascending key is beyond null when not null, and a descending key is beyond a value
 * when lower or null. A sort key is expected to hold one type of scalar (and null or nothing).
 *
 * When the first key runs upward from a value, the filter also says `k1 >= value` on its own: the
 * same records, but a conjunct a store can answer with a range read of an index. Downward it says
 * `k1 <= value or k1 null`, which a store that knows from the schema that k1 is never null reads as
 * the range `k1 <= value` (a descending walk, e.g. newest first, then reads an index backwards).
 */
export function beyond(position: Position, sort: StoreQuery['sort'], forward: boolean, idField: string): Filter {
  const branches: Filter[] = []
  sort.forEach(([field, direction], index) => {
    const step = after(field, position[index]!, forward ? direction : (-direction as SortDirection), field !== idField)
    if (!step) return
    const equal = sort
      .slice(0, index)
      .map(([key], before): Filter => ({ op: 'eq', field: key, value: position[before]! }))
    branches.push(equal.length === 0 ? step : { op: 'and', filters: [...equal, step] })
  })
  const chain: Filter = branches.length === 1 ? branches[0]! : { op: 'or', filters: branches }
  const [first, direction] = sort[0]!
  const value = position[0]!
  if (value === null) return chain
  if ((forward ? direction : -direction) === 1)
    return { op: 'and', filters: [{ op: 'gte', field: first, value }, chain] }
  const atMost: Filter = { op: 'lte', field: first, value }
  const bound: Filter =
    first === idField ? atMost : { op: 'or', filters: [atMost, { op: 'eq', field: first, value: null }] }
  return { op: 'and', filters: [bound, chain] }
}

/** The records whose `field` lies beyond `value` in `direction`; undefined when none can. Ids are never null. */
function after(field: string, value: Scalar, direction: SortDirection, nullable: boolean): Filter | undefined {
  if (direction === 1) return value === null ? { op: 'ne', field, value: null } : { op: 'gt', field, value: value }
  if (value === null) return undefined
  if (!nullable) return { op: 'lt', field, value }
  return {
    op: 'or',
    filters: [
      { op: 'lt', field, value },
      { op: 'eq', field, value: null }
    ]
  }
}

/** The top-level fields to keep in a `$select` so that a cursor can be minted from the records. */
export function selectForCursor(select: string[] | undefined, sort: StoreQuery['sort']): string[] | undefined {
  if (!select) return undefined
  const needed = sort.map(([field]) => field.split('.')[0]!).filter((field) => !select.includes(field))
  return needed.length === 0 ? select : [...select, ...new Set(needed)]
}

function valueAt(record: Record<string, unknown>, field: string): unknown {
  let value: unknown = record
  for (const key of field.includes('.') ? field.split('.') : [field]) {
    if (!isRecord(value) || !Object.hasOwn(value, key)) return undefined
    value = value[key]
  }
  return value
}

function isScalar(value: unknown): value is Scalar {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value)
}

/** FNV-1a over the UTF-16 code units, twice with different offsets: 16 hex digits that catch edits. */
function checksum(text: string): string {
  let a = 0x811c9dc5
  let b = 0x01000193 ^ 0x5bd1e995
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    a = Math.imul(a ^ code, 0x01000193)
    b = Math.imul(b ^ code, 0x01000193) ^ (a >>> 15)
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0')
}

function toBase64Url(text: string): string {
  const bytes = new TextEncoder().encode(text)
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function fromBase64Url(text: string): string {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'))
  // Printable ASCII bytes are their own UTF-8 text (a cursor over numbers and plain strings): no decoding to do.
  if (!/[^\x20-\x7e]/.test(binary)) return binary
  const bytes = new Uint8Array(binary.length)
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index)
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
}
