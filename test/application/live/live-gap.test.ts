import { describe, expect, it } from '@jest/globals'
import { LiveView } from '../../../src/application/live/live-view.js'
import { concerning } from '../../../src/application/live/replay.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { PublishedEvent } from '../../../src/domain/realtime/event-history.js'

/*
 * A watch resumed on an instance started after its offset (ADR 0019): the log's events between the offset and the
 * instance's start are only tested — does any of them concern the watch? — and a watch none concerns resumes
 * instead of a reset. The SIGKILL e2e's quiet watches were reset there: every write to a record the view would show
 * counted, wherever it landed. A full window from the first match is changed only by a record it holds or one that
 * sorts before its end.
 */
const records: Doc[] = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => ({ id: `m${n}`, n, text: `t${n}` }))

/** A view of `raw` over the records (sorted as a store would, at most its read limit), once it has read. */
async function viewOf(raw: Record<string, unknown>): Promise<LiveView> {
  const query = parseQuery(raw)
  const sorted = (rows: Doc[]) => {
    const by = query.sort[0]
    return by ? [...rows].sort((a, b) => by[1] * ((a[by[0]] as number) - (b[by[0]] as number))) : rows
  }
  const view = new LiveView(
    'key',
    'messages',
    query,
    'id',
    query.limit ?? 0,
    {
      read: async (limit) => sorted(records).slice(0, limit),
      head: () => undefined,
      held: () => undefined,
      reading: () => undefined,
      drop: () => undefined
    },
    () => undefined
  )
  await view.ready
  return view
}

const event = (kind: string, data: Doc, path = 'messages'): PublishedEvent => ({ path, event: kind, data })

describe('the events before a fresh instance started, tested against a resumed watch', () => {
  it('leave a full top-N window alone when they land beyond its end, and concern it when they enter or touch it', async () => {
    const view = await viewOf({ $sort: { n: -1 }, $limit: 3 })
    const client = view.list // 8, 7, 6
    expect(client.map((row) => row.n)).toEqual([8, 7, 6])
    const concerns = concerning(view, 'id', client)
    // Beyond the window: a record of the view's buffer patched, one created further down, one removed there.
    expect(concerns(event('patched', { id: 'm5', n: 2, text: 't5' }))).toBe(false)
    expect(concerns(event('created', { id: 'm0', n: 0 }))).toBe(false)
    expect(concerns(event('removed', { id: 'm4', n: 4 }))).toBe(false)
    expect(concerns(event('created', { id: 'x', n: 100 }, 'others'))).toBe(false)
    // Into it or on it.
    expect(concerns(event('created', { id: 'm9', n: 9 }))).toBe(true)
    expect(concerns(event('patched', { id: 'm1', n: 10 }))).toBe(true)
    expect(concerns(event('patched', { id: 'm7', n: 7, text: 'same n' }))).toBe(true)
    expect(concerns(event('removed', { id: 'm6', n: 6 }))).toBe(true)
    // A tie with the last record goes by id: 'm5' < 'm6' enters, 'm7x' > 'm6' does not.
    expect(concerns(event('created', { id: 'm5x', n: 6 }))).toBe(true)
    expect(concerns(event('created', { id: 'm7x', n: 6 }))).toBe(false)
    // Ids compare as text, whatever their type in the log row.
    expect(concerns(event('patched', { id: 'm8', n: 8 }))).toBe(true)
  })

  it('concern a list that is not a full window from the first match whenever the view would show the record', async () => {
    const short = await viewOf({ $sort: { n: -1 }, $limit: 20 })
    expect(concerning(short, 'id', short.list)(event('created', { id: 'm0', n: 0 }))).toBe(true)
    const skipped = await viewOf({ $sort: { n: -1 }, $skip: 1, $limit: 3 })
    const concerns = concerning(skipped, 'id', skipped.list)
    expect(concerns(event('created', { id: 'm0', n: 0 }))).toBe(true)
    // A removal before the window shifts it: with $skip, a removed record it would show concerns it.
    expect(concerns(event('removed', { id: 'gone', n: 100 }))).toBe(true)
    // $select without the sort key: the client's last record cannot be placed.
    const selected = await viewOf({ $sort: { n: -1 }, $limit: 3, $select: ['text'] })
    expect(concerning(selected, 'id', selected.list)(event('created', { id: 'm0', n: 0 }))).toBe(true)
  })
})
