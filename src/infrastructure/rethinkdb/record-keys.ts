import type { RStream } from 'rethinkdb-ts'
import { BadRequest, Conflict, GeneralError, type FeathersError } from '../../domain/errors/errors.js'
import type { Data, Id, Params } from '../../domain/service/service.js'
import { onlyKinds, type FieldShape } from './field-shapes.js'

// The record-level rules of RethinkDbStore that need no query: keys, insert results, params.rethinkdb.

/**
 * The primary keys a record with this id may be stored under, the exact form first. REST ids
 * arrive as strings ("0") while the key may be the number 0 (and the other way round), as the
 * memory adapter's string map keys allow. A key whose kind is known takes that form only, so the
 * lookup is one plain `get`; none when no record can have this id.
 */
export function candidateKeys(id: Id, key: FieldShape | undefined): Id[] {
  const number = typeof id === 'number' ? id : Number(id)
  const numeric = typeof id === 'number' ? Number.isFinite(id) : Number.isFinite(number) && String(number) === id
  const forms: Id[] = !numeric ? [id] : typeof id === 'number' ? [id, String(id)] : [id, number]
  if (onlyKinds(key, 'number')) return forms.filter((form) => typeof form === 'number')
  if (onlyKinds(key, 'string')) return forms.filter((form) => typeof form === 'string')
  return forms
}

/**
 * RethinkDB rejects primary keys over 127 bytes with a query error, even in `get`: such an id
 * cannot be stored, so it finds nothing (a long id in a URL is a 404, not a 500).
 */
export function isStorableKey(id: Id): boolean {
  return typeof id !== 'string' || Buffer.byteLength(id) <= 127
}

export function withoutKey(data: Data, key: string): Data {
  const { [key]: _removed, ...rest } = data
  return rest
}

/** The inserted records in the order of the input (generated keys in order of the records without one). */
export function inInputOrder(prepared: Data[], created: Data[], generated: string[], idField: string): Data[] {
  const byKey = new Map(created.map((record) => [JSON.stringify(record[idField]), record]))
  let next = 0
  const ordered = prepared.map((record) => byKey.get(JSON.stringify(record[idField] ?? generated[next++])))
  return ordered.every((record): record is Data => record !== undefined) ? ordered : created
}

/** What the caller hears about a refused insert: 409 for a taken key, 400 otherwise. */
export function insertError(message: string, idField: string): FeathersError {
  if (/duplicate primary key/i.test(message)) return new Conflict(`A record with this ${idField} already exists`)
  return new BadRequest(`Cannot store the record: ${message}`)
}

/** `params.rethinkdb` (set by a hook, e.g. from createQuery), which replaces the table as the base query. */
export function customBase(params: Params | undefined): RStream<Data> | undefined {
  const custom = params?.rethinkdb
  if (custom === undefined || custom === null) return undefined
  if (typeof custom !== 'function' || typeof (custom as { run?: unknown }).run !== 'function') {
    throw new GeneralError('params.rethinkdb must be a ReQL sequence (for example from createQuery)')
  }
  return custom as RStream<Data>
}
