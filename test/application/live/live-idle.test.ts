import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries } from '../../../src/application/live/index.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import type { Connection, Query } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { InMemoryEventHistory } from '../../../src/infrastructure/store-commons/history/in-memory-event-history.js'
import { watchWith } from './watch-request.js'

/*
 * Views kept after their last watch (ADR 0019, Resume): a connection that drops and comes back within keepViewsMs
 * resumes into its views as they are — current, nothing read — and gets the changes it missed; a view nobody came
 * back to is dropped after the delay, or at once when a write would make it read again.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function setUp(keepViewsMs: number) {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()))
  const history = new InMemoryEventHistory({ now: () => Date.now() }, 60_000)
  const live = new LiveQueries(app, {
    maxWatches: 10,
    history,
    keepViewsMs,
    progress: { everyMs: 0, events: 1, maxAgeMs: 0 }
  })
  await app.setup()
  const messages = app.service('messages')
  const publish = (event: string, data: Doc) =>
    live.observe({ path: 'messages', event, data }, history.append({ path: 'messages', event, data }))
  const create = async (data: Doc) => {
    const created = (await messages.create(data)) as Doc
    publish('created', created)
    return created
  }
  let reads = 0
  const find = async (query: Query) => (reads++, (await messages.find({ query, paginate: false })) as Doc[])
  const watch = (connection: Connection, query: Query, options: unknown = {}) =>
    watchWith(live, { connection, path: 'messages', query, options, find })
  return { live, create, publish, watch, reads: () => reads, messages }
}

describe('views kept after their last watch', () => {
  it('take a resumed watch back without a read, with the changes it missed', async () => {
    const { live, create, watch, reads } = await setUp(1_000)
    await create({ n: 1 })
    const connection: Connection = { provider: 'a' }
    const before = await watch(connection, { $sort: { n: 1 } })
    live.release(connection)
    expect(live.size).toMatchObject({ views: 0, idle: 1 })
    await create({ n: 2 })
    const resumed = await watch(
      { provider: 'a' },
      { $sort: { n: 1 } },
      {
        resume: { offset: before.answer.offset!, records: before.answer.records! }
      }
    )
    expect(reads()).toBe(1)
    expect(resumed.answer).toMatchObject({ changes: [] })
    expect(resumed.frames.flatMap((frame) => frame.changes)).toEqual([expect.objectContaining({ type: 'added' })])
    expect(live.size).toMatchObject({ views: 1, idle: 0 })
    await live.teardown()
  })

  it('are dropped after the delay, or at once when a write would make them read again', async () => {
    const { live, create, publish, watch, messages } = await setUp(1_000)
    const a = await create({ n: 1 })
    const connection: Connection = { provider: 'a' }
    await watch(connection, { $sort: { n: 1 } })
    live.release(connection)
    expect(live.size).toMatchObject({ views: 0, idle: 1 })
    await sleep(1_100)
    expect(live.size).toMatchObject({ views: 0, idle: 0, records: 0 })
    // A top-1 window (and one record of buffer) over three records: when both it knows are removed, it must read
    // again, which an idle view has no one to make as.
    const b = await create({ n: 2 })
    await create({ n: 3 })
    const other: Connection = { provider: 'b' }
    await watch(other, { $sort: { n: 1 }, $limit: 1 })
    live.release(other)
    publish('removed', (await messages.remove(a.id as number)) as Doc)
    expect(live.size).toMatchObject({ views: 0, idle: 1 })
    publish('removed', (await messages.remove(b.id as number)) as Doc)
    expect(live.size).toMatchObject({ views: 0, idle: 0 })
    await live.teardown()
  })
})
