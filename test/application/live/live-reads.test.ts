import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries } from '../../../src/application/live/index.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import type { Connection, Query } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { watchWith } from './watch-request.js'

/*
 * A watch whose socket closed while its view's first read ran has no one to answer: when that read then fails, the
 * watch ends quietly. It used to throw to the closed socket, and the transport logged `socket event failed` for each
 * (the PostgreSQL oracle logged hundreds at a cut while reads waited their turn behind a limiter, since removed).
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('a view read that fails after its watch was let go of', () => {
  it('ends the watch quietly: nothing answered, nothing thrown; a watch still held gets the error', async () => {
    const app = new App()
    app.use('messages', new AdapterService(new InMemoryStore()))
    // Every read fails, after a while (a store that went away under load).
    app.service('messages').hooks({
      around: { find: [async () => (await sleep(30), Promise.reject(new Error('the pool is closed')))] }
    })
    const live = new LiveQueries(app, { maxWatches: 10, progress: { everyMs: 0, events: 1, maxAgeMs: 0 } })
    await app.setup()
    const find = async (query: Query) => (await app.service('messages').find({ query, paginate: false })) as Doc[]
    const watch = (connection: Connection, query: Query) =>
      watchWith(live, { connection, path: 'messages', query, options: {}, find })
    const staying: Connection = { provider: 'test' }
    const leaving: Connection = { provider: 'test' }
    const held = watch(staying, { room: 'a' }).then(
      () => undefined,
      (error: unknown) => error
    )
    const gone = watch(leaving, { room: 'b' })
    await sleep(5)
    live.release(leaving)
    const answered = await gone
    expect(answered.answer).toBeUndefined()
    expect(answered.sent).toEqual([])
    expect(await held).toEqual(new Error('the pool is closed'))
    expect(live.size.watches).toBe(0)
    await live.teardown()
  })
})
