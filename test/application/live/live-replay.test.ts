import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries } from '../../../src/application/live/index.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import { applyChanges } from '../../../src/domain/query/live-window.js'
import type { PublishedEvent } from '../../../src/domain/realtime/event-history.js'
import type { Connection, Query } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { InMemoryEventHistory } from '../../../src/infrastructure/store-commons/history/in-memory-event-history.js'
import { watchWith } from './watch-request.js'

/*
 * Resume (ADR 0019): a watch that comes back with its offset and list gets every change it missed as its own frame,
 * with that event's offset, in order, then goes live — also when a refill brought a record from beyond the window.
 */
async function setUp() {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()))
  app.use('others', new AdapterService(new InMemoryStore()))
  const history = new InMemoryEventHistory({ now: () => Date.now() }, 60_000)
  const live = new LiveQueries(app, { maxWatches: 10, history })
  await app.setup()
  const messages = app.service('messages')
  /** A write to the store, then its event into the history and the feed (as the recovery module does). */
  const publish = (event: PublishedEvent) => live.observe(event, history.append(event))
  const write = {
    create: async (data: Doc) => {
      const created = (await messages.create(data)) as Doc
      publish({ path: 'messages', event: 'created', data: created })
      return created.id as number
    },
    patch: async (id: number, data: Doc) =>
      publish({ path: 'messages', event: 'patched', data: await messages.patch(id, data) }),
    remove: async (id: number) => publish({ path: 'messages', event: 'removed', data: await messages.remove(id) })
  }
  const connection: Connection = { provider: 'test' }
  const find = async (query: Query) => (await messages.find({ query, paginate: false })) as Doc[]
  const watch = async (query: Query, options: unknown = {}) => {
    const { answer, frames } = await watchWith(live, { connection, path: 'messages', query, options, find })
    return { answer, frames }
  }
  return { live, write, publish, find, watch, connection }
}

const ns = (list: Doc[]) => list.map((row) => row.n as number)

describe('resuming a live query', () => {
  it('replays each missed change as its own frame with its offset, in order, then goes live', async () => {
    const { live, write, publish, find, watch, connection } = await setUp()
    const query = { $sort: { n: -1 }, $limit: 3 }
    const id = new Map<number, number>()
    for (const n of [1, 2, 3, 4, 5, 6]) id.set(n, await write.create({ n }))
    const first = await watch(query)
    expect(ns(first.answer.records!)).toEqual([6, 5, 4])
    const offset = first.answer.offset!
    live.unwatch(connection, first.answer.id) // the view goes: the resume reads again, as another instance would

    id.set(7, await write.create({ n: 7 })) // enters at the top, 4 leaves
    publish({ path: 'others', event: 'created', data: { id: 1 } }) // another service: no frame
    await write.create({ n: 0 }) // beyond the window: no frame
    await write.patch(id.get(5)!, { n: -1 }) // leaves the window; 4 comes back from beyond it
    await write.remove(id.get(7)!) // leaves; 3 refills the window
    const missed = await watch(query, { resume: { offset, records: first.answer.records } })

    expect(missed.answer).toEqual({ id: missed.answer.id, offset, changes: [] })
    expect(missed.frames).toHaveLength(3)
    const lists: number[][] = []
    let list = first.answer.records!
    for (const frame of missed.frames) lists.push(ns((list = applyChanges(list, frame.changes))))
    expect(lists).toEqual([
      [7, 6, 5],
      [7, 6, 4],
      [6, 4, 3]
    ])
    const offsets = missed.frames.map((frame) => frame.offset)
    expect(new Set(offsets).size).toBe(3)
    expect(offsets).not.toContain(offset)

    // Live after the replay: the next write is one frame more, nothing replayed twice.
    await write.create({ n: 10 })
    expect(missed.frames).toHaveLength(4)
    list = applyChanges(list, missed.frames[3]!.changes)
    expect(list).toEqual(await find(query))
  })

  it('replays into a view other watches keep, with $select, and sends nothing when nothing changed', async () => {
    const { write, find, watch } = await setUp()
    const query = { room: 'a', $sort: { n: 1 }, $select: ['n'] }
    const id = new Map<number, number>()
    for (const n of [1, 2, 3]) id.set(n, await write.create({ n, room: 'a', text: `t${n}` }))
    const keeper = await watch(query)
    const quiet = await watch(query)
    const offset = quiet.answer.offset!
    const nothing = await watch(query, { resume: { offset, records: quiet.answer.records } })
    expect(nothing.answer).toMatchObject({ offset, changes: [] })
    expect(nothing.frames).toEqual([])

    await write.patch(id.get(2)!, { text: 'not selected' }) // no change to a list of { id, n }
    await write.patch(id.get(1)!, { room: 'b' })
    await write.create({ n: 0, room: 'a' })
    const resumed = await watch(query, { resume: { offset, records: quiet.answer.records } })
    expect(resumed.frames.map((frame) => frame.changes.map((change) => change.type))).toEqual([['removed'], ['added']])
    let list = quiet.answer.records!
    for (const frame of resumed.frames) list = applyChanges(list, frame.changes)
    const expected = (await find(query)).map((row) => ({ id: row.id, n: row.n }))
    expect(list).toEqual(expected)
    expect(keeper.frames.flatMap((frame) => frame.changes)).toHaveLength(2)
  })
})
