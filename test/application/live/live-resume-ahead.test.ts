import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries } from '../../../src/application/live/index.js'
import { Unavailable } from '../../../src/domain/errors/errors.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import type { Query } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { InMemoryEventHistory } from '../../../src/infrastructure/store-commons/history/in-memory-event-history.js'
import { watchWith } from './watch-request.js'

/*
 * A watch resumed on an instance that has not followed the log as far as the client's offset (the instance that
 * gave it out was ahead; under load one instance's log feed runs seconds behind the other's) is not past the
 * history: its resume fails with 503 and holds nothing, and the client sends it again — no reset (a reset there is
 * the likely cause of the 6 the PostgreSQL oracle at full size met).
 */
describe('a resume from an offset this instance has not reached', () => {
  it('fails with 503, leaves no watch behind, and succeeds once the instance has caught up', async () => {
    const app = new App()
    app.use('messages', new AdapterService(new InMemoryStore()))
    const history = new InMemoryEventHistory({ now: () => 0 }, 60_000)
    let behind = true
    const sinceFor = history.since.bind(history)
    Object.assign(history, {
      sinceFor: (offset: string) =>
        behind ? Promise.reject(new Unavailable('not yet reached the offset')) : sinceFor(offset)
    })
    const live = new LiveQueries(app, { maxWatches: 1, history })
    await app.setup()
    const created = (await app.service('messages').create({ room: 'a' })) as Doc
    const offset = history.append({ path: 'messages', event: 'created', data: created })
    const connection = { provider: 'test' }
    const find = async (query: Query) => (await app.service('messages').find({ query, paginate: false })) as Doc[]
    const watch = () =>
      watchWith(live, {
        connection,
        path: 'messages',
        query: { room: 'a' },
        options: { resume: { offset, records: [created] } },
        find
      })
    await expect(watch()).rejects.toMatchObject({ code: 503 })
    // Nothing held: the connection's one watch (maxWatches 1) is free for the next attempt, which resumes.
    behind = false
    const resumed = await watch()
    expect(resumed.answer).toEqual({ id: expect.any(String), offset, changes: [] })
    expect(resumed.answer.reset).toBeUndefined()
    await live.teardown()
  })
})
