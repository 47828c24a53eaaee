import type { RStream } from 'rethinkdb-ts'
import { BadRequest, Conflict, GeneralError, type FeathersError } from '../../domain/errors/errors.js'
import type { Data, Id, Params } from '../../domain/service/service.js'
import { canonical } from './direct-writes.js'
import { onlyKinds, type FieldShape } from '../../domain/schema/field-shapes.js'

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

/** What one caller of a grouped insert gets: its records as stored, in its order, or why they were refused. */
export interface InsertOutcome {
  /** The caller's records that went in (all of them, in input order, when there is no error). */
  created: Data[]
  /** The server's message for the caller's first refused record. */
  error?: string
}

/** What the server answers an `insert([...], { returnChanges: true })`. */
export interface InsertResult {
  generated_keys?: string[]
  first_error?: string
  changes?: { new_val?: Data | null; old_val?: Data | null; error?: string }[]
}

/**
 * Splits the answer to one insert of several callers' records (`calls[i]` are caller i's) into one
 * outcome per caller. Records are matched by key: their own, or the generated one (the server gives
 * keys to the records without one in input order). A caller whose records all went in gets them in
 * its order; one with a refused record gets the message of the first (a taken key, say) and the
 * ones that did go in, to undo: a caller's insert is all or nothing, the others' are unaffected.
 */
export function splitInsert(calls: Data[][], result: InsertResult, idField: string): InsertOutcome[] {
  const created = new Map<string, Data>()
  const refused = new Map<string, string>()
  for (const change of result.changes ?? []) {
    if (change.error !== undefined) {
      const record = change.new_val ?? change.old_val
      if (record) refused.set(JSON.stringify(record[idField]), change.error)
    } else if (change.new_val && change.old_val == null) {
      created.set(JSON.stringify(change.new_val[idField]), change.new_val)
    }
  }
  const generated = result.generated_keys ?? []
  let next = 0
  const keyed = calls.map((records) =>
    records.map((record) => ({ record, key: JSON.stringify(record[idField] ?? generated[next++]) }))
  )
  // A key given by several callers went in for one of them at most: the one whose record was stored.
  const seen = new Set<string>()
  const shared = new Set<string>()
  for (const { key } of keyed.flat()) (seen.has(key) ? shared : seen).add(key)
  const claimed = new Set<string>()
  return keyed.map((records): InsertOutcome => {
    const stored: Data[] = []
    for (const { record, key } of records) {
      const row = created.get(key)
      if (!row || claimed.has(key) || (shared.has(key) && canonical(row) !== canonical(record))) continue
      claimed.add(key)
      stored.push(row)
    }
    if (stored.length === records.length) return { created: stored }
    const error = records.map(({ key }) => refused.get(key)).find((message) => message !== undefined)
    return { created: stored, error: error ?? result.first_error ?? 'Insert failed' }
  })
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
