import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries, type LiveFrame, type WatchAnswer } from '../../../src/application/live/index.js'
import { useRules, type RulesDefinition } from '../../../src/application/rules/index.js'
import { Gateway } from '../../../src/application/transport/gateway.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import { applyChanges } from '../../../src/domain/query/live-window.js'
import type { Connection, Query } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { noteSchemas, type Note } from '../rules/rules-harness.js'

/*
 * A watch follows its user's rules as they change: when a user's record changes (rules' followUsers refreshes the
 * connection's user), the watch moves to the view of the new rules and is sent the difference — rows the user may
 * no longer read leave within 1 s (here at once: one process), rows they now may read arrive.
 */
const notesRules: RulesDefinition = (user, { can }) => {
  if (!user) return
  can('read', 'notes', { to: null })
  can('read', 'notes', { to: user.id })
  if (user.role === 'admin') can('read', 'notes')
}

async function settled(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
}

describe('live queries and rule changes', () => {
  it("moves a watch to the view of its user's new rules, and sends the rows that leave and arrive", async () => {
    const app = new App()
    app.use('users', new AdapterService(new InMemoryStore()))
    app.use('notes', new AdapterService(new InMemoryStore<Note>()), { schemas: noteSchemas })
    useRules(app, { notes: notesRules })
    const live = new LiveQueries(app, { maxWatches: 10 })
    app.extend(live)
    const gateway = new Gateway(app)
    await app.setup()
    const users = app.service('users')
    const notes = app.service('notes')
    const bob = (await users.create({ email: 'bob@x.io', role: 'user' })) as Doc
    const eve = (await users.create({ email: 'eve@x.io', role: 'user' })) as Doc
    const connection: Connection = { provider: 'socketio', user: bob }
    gateway.open(connection)
    app.emit('login', { user: bob }, { connection })
    await notes.create({ text: 'public', to: null })
    await notes.create({ text: 'for bob', to: bob.id })
    await notes.create({ text: 'for eve', to: eve.id })

    let list: Doc[] = []
    const frames: LiveFrame[] = []
    let answer: WatchAnswer | undefined
    const find = async (query: Query) =>
      (
        await gateway.call({
          path: 'notes',
          method: 'find',
          params: { ...gateway.connectionParams(connection, query), paginate: false }
        })
      ).result
    await live.watch({
      connection,
      path: 'notes',
      query: { $sort: { text: 1 } },
      options: {},
      find,
      send: (frame) => {
        if (!('id' in frame)) return
        frames.push(frame)
        list = applyChanges(list, frame.changes)
      },
      answer: (given) => {
        answer = given
        list = given.records!
      }
    })
    const texts = () => list.map((note) => note.text)
    expect(answer).toMatchObject({ id: expect.any(String) })
    expect(texts()).toEqual(['for bob', 'public'])
    expect(live.size.views).toBe(1)

    await users.patch(bob.id as number, { role: 'admin' })
    await settled()
    expect(texts()).toEqual(['for bob', 'for eve', 'public'])
    expect(frames.at(-1)!.changes).toMatchObject([{ type: 'added', index: 1 }])
    // The old view had no other watch: freed, not kept idle (it would resolve writes as a user of other rules).
    expect(live.size).toMatchObject({ views: 1, idle: 0 })

    const started = Date.now()
    await users.patch(bob.id as number, { role: 'user' })
    await settled()
    expect(texts()).toEqual(['for bob', 'public'])
    expect(frames.at(-1)!.changes).toMatchObject([{ type: 'removed', oldIndex: 1 }])
    expect(Date.now() - started).toBeLessThan(1000)
    expect(list).toEqual(await find({ $sort: { text: 1 } }))

    // And live from the new view: a note for eve never arrives, one for bob does.
    await notes.create({ text: 'again for eve', to: eve.id })
    await notes.create({ text: 'again for bob', to: bob.id })
    await settled()
    expect(texts()).toEqual(['again for bob', 'for bob', 'public'])
  })
})
