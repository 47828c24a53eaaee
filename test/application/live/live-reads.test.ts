import { describe, expect, it } from '@jest/globals'
import pLimit from 'p-limit'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries } from '../../../src/application/live/index.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import type { Query } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { liveSettings } from '../../../src/infrastructure/live/live-settings.js'
import { applyChanges } from '../../../src/domain/query/live-window.js'
import { watchWith } from './watch-request.js'

/*
 * Views' reads go through the module's limiter (LIVE_MAX_READS): a cut that moves hundreds of watches to an instance
 * makes as many views read at once, and a store whose connection pool they take holds every write back behind them
 * (the PostgreSQL oracle at full size saw writes wait 8.9 s). A view waiting for its turn is reading: the writes it
 * hears meanwhile wait with it, so its list still joins them with no gap.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('view reads', () => {
  it('run at most as many at once as the limiter lets, and a write while they wait reaches every list', async () => {
    const app = new App()
    app.use('messages', new AdapterService(new InMemoryStore()))
    let running = 0
    let most = 0
    app.service('messages').hooks({
      around: {
        find: [
          async (_context, next) => {
            most = Math.max(most, ++running)
            await sleep(20)
            await next()
            running--
          }
        ]
      }
    })
    const live = new LiveQueries(app, {
      maxWatches: 100,
      limitReads: pLimit(2),
      progress: { everyMs: 0, events: 1, maxAgeMs: 0 }
    })
    await app.setup()
    const service = app.service('messages')
    await service.create({ room: 'a', n: 0 })
    const find = async (query: Query) => (await service.find({ query, paginate: false })) as Doc[]
    const queries: Query[] = [0, 1, 2, 3, 4, 5].map((n) => ({ room: 'a', n: { $gte: n - 10 }, $sort: { n: 1 } }))
    const watching = queries.map((query) =>
      watchWith(live, { connection: { provider: 'test' }, path: 'messages', query, options: {}, find })
    )
    // Written while the later views wait for their turn: each list must hold it, once.
    await sleep(5)
    const record = (await service.create({ room: 'a', n: 1 })) as Doc
    live.observe({ path: 'messages', event: 'created', data: record }, undefined)
    const watched = await Promise.all(watching)
    expect(most).toBe(2)
    for (const [index, { answer, frames }] of watched.entries()) {
      const list = frames.reduce((rows, frame) => applyChanges(rows as never[], frame.changes), answer.records as Doc[])
      expect(list).toEqual(await find({ ...queries[index]! }))
      expect(list.map((row) => row.n)).toEqual([0, 1])
    }
    await live.teardown()
  })

  it('LIVE_MAX_READS is 4 by default, and a positive integer', () => {
    expect(liveSettings({}).maxReads).toBe(4)
    expect(liveSettings({ LIVE_MAX_READS: '1' }).maxReads).toBe(1)
    expect(() => liveSettings({ LIVE_MAX_READS: '0' })).toThrow(/LIVE_MAX_READS/)
  })
})
