import type { StoreQuery } from '../../domain/query/ast.js'
import type { Doc } from '../../domain/query/field-getter.js'
import { LiveWindow, sameValue, type WindowChange } from '../../domain/query/live-window.js'
import { project } from '../../domain/query/project.js'
import type { PublishedEvent, RecordedEvent } from '../../domain/realtime/event-history.js'
import { isPlainObject } from '../../domain/objects.js'
import { changesBetween, type LiveView } from './live-view.js'

export const RECORD_EVENTS = new Set(['created', 'updated', 'patched', 'removed'])

/** One missed event's changes to a resumed watch's list, with that event's offset. */
export interface ReplayFrame {
  offset: string
  changes: WindowChange[]
}

/** What a replay needs: the view's query and what it holds now, and how it sees an event's record. */
export interface ReplaySource {
  window: LiveWindow
  idField: string
  /** The list the view's watchers hold now, current at `until` (the last event the view applied). */
  list: Doc[]
  until: string | undefined
  /** An event of the view's service: its record's id, and the record as the view sees it (undefined if hidden). */
  record(event: RecordedEvent): { id: unknown; record: Doc | undefined } | undefined
}

/**
 * The frames a resumed watch missed (ADR 0019, Resume): for each event after the client's offset that changed the
 * client's list, the changes it made, with its offset, so that the client applies them in order and then goes live.
 *
 * Events carry a record's value after the write, not the window around it, so each list is recomputed: the records
 * the view holds now that no missed event touched held the same values all along; a touched record has the value of
 * its last event so far, or before its first the one in the client's list (or none). The client's list is the first
 * state; each event is applied to a window over all those records, and its frame is the difference of the lists
 * (the window's cost per event, not a sort). A record no event touched and the view no longer
 * knows (past its buffer now, but before the window's end then) cannot be seen: should the lists drift from the
 * view's, the last frame also carries the changes to the list the view holds, so the client ends exactly there.
 */
export function replay(source: ReplaySource, client: Doc[], events: RecordedEvent[]): ReplayFrame[] {
  const { window, idField } = source
  const writes: { offset: string; id: unknown; record: Doc | undefined }[] = []
  for (const event of events) {
    const write = source.record(event)
    if (write) writes.push({ offset: event.offset, ...write })
    if (event.offset === source.until) break
  }
  const touched = new Set(writes.map((write) => write.id))
  // Before the first write: the client's copies of touched records, and every record no write touched.
  const rows = new Map<unknown, Doc>()
  for (const row of client) rows.set(row[idField], row)
  for (const row of window.knownRows()) if (!touched.has(row[idField])) rows.set(row[idField], row)
  // Every record it knows, so that a record leaving the window is replaced by the next one (no read, no buffer).
  const scratch = new LiveWindow({ ...window.query }, idField, Infinity)
  scratch.reset([...rows.values()])
  const select = window.query.select
  const listNow = (): Doc[] =>
    select ? scratch.window().map((row) => project(row, select, idField)) : scratch.window()
  const frames: ReplayFrame[] = []
  let list = client
  for (const { offset, id, record } of writes) {
    const known = scratch.known(id)
    const value = record && window.accepts(record) ? record : undefined
    if (value === undefined ? known === undefined : known !== undefined && sameValue(known, value)) continue
    if (scratch.apply(id, value).changes.length === 0) continue
    const next = listNow()
    const changes = changesBetween(list, next, idField)
    list = next
    if (changes.length > 0) frames.push({ offset, changes })
  }
  const drift = changesBetween(list, source.list, idField)
  if (drift.length === 0) return frames
  const last = frames.at(-1)
  const offset = source.until ?? writes.at(-1)?.offset
  if (last && last.offset === offset) last.changes.push(...drift)
  else if (offset !== undefined) frames.push({ offset, changes: drift })
  return frames
}

/** What a replay needs of a view: its window and list, and an event's record as the view sees it. */
export function replaySource(view: LiveView, idField: string, original: (data: unknown) => unknown): ReplaySource {
  return {
    window: view.window,
    idField,
    list: view.list,
    until: view.current,
    record: (event) => {
      if (event.path !== view.path || !RECORD_EVENTS.has(event.event)) return undefined
      const record = original(event.data)
      if (!isPlainObject(record)) return undefined
      return { id: record[idField], record: event.event === 'removed' ? undefined : view.visible(record) }
    }
  }
}

/**
 * Whether an event (a raw log row from before this instance followed the log) may have changed a resumed watch's
 * list, were the list still the client's at that point: a record of the view's service that the client holds, or
 * one the view would show that enters the list. Events are tested in order and the first that concerns the watch
 * ends the test, so each one finds the client's list unchanged. When the list is a full window from the first
 * matching record (no `$skip`, `$limit` records) whose records carry the sort keys, a record enters it only by
 * sorting before its last one: a write beyond the window (a record of the buffer patched, one created further down,
 * one removed there) leaves it as it was. Otherwise any record the view would show concerns it, as does one the view
 * holds now, or (with `$skip`) one removed that it would have shown. Ids compare as text (a log row's may be typed
 * otherwise than the client's copy).
 */
export function concerning(view: LiveView, idField: string, client: Doc[]): (event: PublishedEvent) => boolean {
  const { window } = view
  const last = listEnd(window.query, client)
  const held = new Set([...client, ...(last ? [] : window.knownRows())].map((row) => String(row[idField])))
  return (event) => {
    if (event.path !== view.path || !RECORD_EVENTS.has(event.event)) return false
    if (!isPlainObject(event.data)) return true
    if (held.has(String(event.data[idField]))) return true
    if (event.event === 'removed' && (last || window.query.skip === 0)) return false
    const record = view.visible(event.data)
    if (record === undefined || !window.accepts(record)) return false
    return last === undefined || window.before(record, last)
  }
}

/** The last record of a client's list that is a full window from the first match and holds every sort key. */
function listEnd(query: StoreQuery, client: Doc[]): Doc | undefined {
  const { skip, limit, select, sort } = query
  if (skip !== 0 || limit === undefined || client.length !== limit) return undefined
  if (select && !sort.every(([field]) => select.includes(field.split('.')[0]!))) return undefined
  return client.at(-1)
}
