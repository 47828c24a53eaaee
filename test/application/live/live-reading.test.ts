import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries } from '../../../src/application/live/index.js'
import { applyChanges } from '../../../src/domain/query/live-window.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import type { Query } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { watchWith } from './watch-request.js'

/*
 * A view reading the store (its first read, a refill) does not know yet which records it will hold, and a write
 * that takes a record out of its query is filed under none of the query's anchors. Such a write, landing after the
 * read took its rows and before it answered, must still reach the view: the RethinkDB live oracle (reads take
 * seconds there under load) found lists that kept a record patched out of their query while their view read.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function setUp() {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()))
  const live = new LiveQueries(app, { maxWatches: 10 })
  await app.setup()
  const messages = app.service('messages')
  /** Reads hold their rows until `release` (a slow store): the store answered before the writes that follow. */
  let gate: Promise<void> | undefined
  let release = () => {}
  const hold = () => (gate = new Promise<void>((resolve) => (release = resolve)))
  const find = async (query: Query) => {
    const rows = (await messages.find({ query, paginate: false })) as Doc[]
    await gate
    return rows
  }
  const patch = async (id: unknown, data: Doc) =>
    live.observe(
      { path: 'messages', event: 'patched', data: (await messages.patch(id as string, data)) as Doc },
      undefined
    )
  const remove = async (id: unknown) =>
    live.observe({ path: 'messages', event: 'removed', data: (await messages.remove(id as string)) as Doc }, undefined)
  const watch = (query: Query) =>
    watchWith(live, { connection: { provider: 'test' }, path: 'messages', query, options: {}, find })
  const create = async (data: Doc) => (await messages.create(data)) as Doc
  return { live, hold, release: () => release(), patch, remove, watch, create }
}

describe('a write while a view reads', () => {
  it('reaches a first read: a record patched out of the query is not in the answer', async () => {
    const { live, hold, release, patch, watch, create } = await setUp()
    const record = await create({ tag: 'e', n: 1 })
    hold()
    const watching = watch({ tag: 'e' })
    await sleep(10)
    await patch(record.id, { tag: 'd' })
    release()
    expect((await watching).answer.records).toEqual([])
    await live.teardown()
  })

  it('reaches a refill: a record beyond the buffer patched out of the query does not enter the window', async () => {
    const { live, hold, release, patch, remove, watch, create } = await setUp()
    const records = []
    for (let n = 1; n <= 6; n++) records.push(await create({ tag: 'e', n }))
    // A window of 2 and a buffer of 2: the view holds n 1–4; n 5 and 6 are beyond it.
    const watched = await watch({ tag: 'e', $sort: { n: 1 }, $limit: 2 })
    let list = watched.answer.records!
    expect(list.map((row) => row.n)).toEqual([1, 2])
    hold()
    // Three removals run the buffer dry: the view reads again, and the read holds its rows.
    for (const record of records.slice(0, 3)) await remove(record.id)
    await sleep(10)
    await patch(records[4]!.id, { tag: 'd' })
    release()
    await sleep(10)
    for (const frame of watched.frames) list = applyChanges(list, frame.changes)
    expect(list.map((row) => row.n)).toEqual([4, 6])
    await live.teardown()
  })
})
