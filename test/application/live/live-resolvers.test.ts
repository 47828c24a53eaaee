import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries, type WatchAnswer } from '../../../src/application/live/index.js'
import { resolve, resolveExternal, resolveResult, virtual } from '../../../src/application/resolvers/index.js'
import { useRules, type RulesDefinition } from '../../../src/application/rules/index.js'
import { Gateway } from '../../../src/application/transport/gateway.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import { applyChanges } from '../../../src/domain/query/live-window.js'
import type { Connection, Query } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { InMemoryEventHistory } from '../../../src/infrastructure/store-commons/history/in-memory-event-history.js'
import { noteSchemas, type Note } from '../rules/rules-harness.js'

/*
 * A live record is resolved as a `find` by its watcher resolves it: a service's `resolveResult` and
 * `resolveExternal` run on the records of later frames with the context of a watcher's connection (an event's
 * own record was resolved for its writer, or for the server), once per write and rule set, in order.
 */
const notesRules: RulesDefinition = (user, { can }) => {
  if (!user) return
  can('read', 'notes', { to: null })
  can('read', 'notes', { to: user.id })
}

async function settled(): Promise<void> {
  for (let i = 0; i < 30; i++) await new Promise((done) => setImmediate(done))
}

describe('live queries and resolvers', () => {
  it("resolves added and changed records per rule set with a watcher's context, in order, as find does", async () => {
    const app = new App()
    let resolutions = 0
    const forMe = resolve<Note>({
      forMe: virtual(async (note: Note, context) => {
        // A live record's resolution: with a watcher's connection, for a write (the calls here are the server's).
        if (context.params.provider !== undefined && context.method !== 'find') resolutions++
        await new Promise((done) => setTimeout(done, note.slow ? 20 : 0))
        return note.to === (context.params.user as Doc | undefined)?.id
      })
    })
    const seenBy = resolve<Note>({
      seenBy: virtual(async (_note, context) => (context.params.user as Doc | undefined)?.email ?? 'server')
    })
    app.use('users', new AdapterService(new InMemoryStore()))
    app.use('notes', new AdapterService(new InMemoryStore<Note>()), { schemas: noteSchemas })
    app.service('notes').hooks({ around: { all: [resolveResult(forMe), resolveExternal(seenBy)] } })
    useRules(app, { notes: notesRules })
    const history = new InMemoryEventHistory({ now: () => Date.now() }, 60_000)
    app.extend({ record: (event) => history.append(event) })
    const live = new LiveQueries(app, { maxWatches: 10, history })
    app.extend(live)
    const gateway = new Gateway(app)
    await app.setup()
    const users = app.service('users')
    const notes = app.service('notes')
    const bob = (await users.create({ email: 'bob@x.io' })) as Doc
    const eve = (await users.create({ email: 'eve@x.io' })) as Doc

    const watch = async (
      connection: Connection,
      query: Query,
      options: { resume?: { offset: string; records: Doc[] } } = {}
    ) => {
      const state = {
        list: options.resume?.records ?? [],
        offsets: [] as string[],
        id: '',
        offset: undefined as string | undefined,
        added: [] as Doc[]
      }
      const find = async (q: Query) =>
        (
          await gateway.call({
            path: 'notes',
            method: 'find',
            params: { ...gateway.connectionParams(connection, q), paginate: false }
          })
        ).result as Doc[]
      await live.watch({
        connection,
        path: 'notes',
        query,
        options,
        find,
        send: (frame) => {
          if (!('id' in frame)) return
          state.list = applyChanges(state.list, frame.changes)
          for (const change of frame.changes) if (change.type === 'added') state.added.push(change.record)
          if (frame.offset !== undefined) state.offsets.push(frame.offset)
        },
        answer: (given: WatchAnswer) => {
          state.list = given.records ?? state.list
          state.id = given.id
          state.offset = given.offset
        }
      })
      return { state, find: () => find(query), connection }
    }
    const connect = (user: Doc) => {
      const connection: Connection = { provider: 'socketio', user }
      gateway.open(connection)
      return connection
    }
    await notes.create({ text: 'a', to: null })
    const bobs = [await watch(connect(bob), { $sort: { text: 1 } }), await watch(connect(bob), { $sort: { text: -1 } })]
    const eves = await watch(connect(eve), { $sort: { text: 1 } })
    expect(eves.state.list).toEqual([{ id: 0, text: 'a', to: null, forMe: false, seenBy: 'eve@x.io' }])

    // Written by the server (no user): its event says forMe false and seenBy 'server'; each watcher sees its own.
    resolutions = 0
    const slow = (await notes.create({ text: 'b', to: eve.id, slow: true })) as Doc
    await notes.patch(slow.id as number, { text: 'c', slow: false })
    await notes.create({ text: 'd', to: bob.id })
    await settled()
    await new Promise((done) => setTimeout(done, 50))
    const counted = resolutions
    for (const watcher of [...bobs, eves]) expect(watcher.state.list).toEqual(await watcher.find())
    expect(eves.state.list.find((note) => note.text === 'c')).toMatchObject({ forMe: true, seenBy: 'eve@x.io' })
    expect(bobs[0]!.state.list.find((note) => note.text === 'd')).toMatchObject({ forMe: true, seenBy: 'bob@x.io' })
    // Once per write and rule set whose views it reaches: b and c for eve, d for bob (once for his two views).
    expect(counted).toBe(3)
    // Frames in publication order: their offsets (when recorded) never go back.
    for (const watcher of [...bobs, eves]) expect(watcher.state.offsets).toEqual([...watcher.state.offsets].sort())

    // Eve goes away; the notes written meanwhile are replayed to her resumed watch, resolved for her.
    const records = eves.state.list
    const offset = eves.state.offsets.at(-1) ?? eves.state.offset!
    live.unwatch(eves.connection, eves.state.id)
    await notes.create({ text: 'e', to: eve.id })
    await notes.patch(slow.id as number, { text: 'f' })
    const resumed = await watch(eves.connection, { $sort: { text: 1 } }, { resume: { offset, records } })
    await settled()
    expect(resumed.state.offsets.length).toBeGreaterThan(0)
    expect(resumed.state.list).toEqual(await resumed.find())
    // Resolved in the frame that adds it, not only by a last frame that ends on the view's list.
    expect(resumed.state.added.find((note) => note.text === 'e')).toMatchObject({ forMe: true, seenBy: 'eve@x.io' })
  })
  it("resolves a resumed watch's missed records only where its query accepts them", async () => {
    const app = new App()
    let resolutions = 0
    const forMe = resolve<Note>({
      forMe: virtual(async (note: Note, context) => {
        if (context.params.provider !== undefined && context.method !== 'find') resolutions++
        return note.to === (context.params.user as Doc | undefined)?.id
      })
    })
    app.use('users', new AdapterService(new InMemoryStore()))
    app.use('notes', new AdapterService(new InMemoryStore<Note>()), { schemas: noteSchemas })
    app.service('notes').hooks({ around: { all: [resolveResult(forMe)] } })
    useRules(app, { notes: notesRules })
    const history = new InMemoryEventHistory({ now: () => Date.now() }, 60_000)
    app.extend({ record: (event) => history.append(event) })
    const live = new LiveQueries(app, { maxWatches: 10, history })
    app.extend(live)
    const gateway = new Gateway(app)
    await app.setup()
    const eve = (await app.service('users').create({ email: 'eve@x.io' })) as Doc
    const notes = app.service('notes')
    const connection: Connection = { provider: 'socketio', user: eve }
    gateway.open(connection)
    const find = async (q: Query) =>
      (
        await gateway.call({
          path: 'notes',
          method: 'find',
          params: { ...gateway.connectionParams(connection, q), paginate: false }
        })
      ).result as Doc[]
    const query = { to: eve.id, $sort: { text: 1 } }
    await notes.create({ text: 'a', to: eve.id })
    const records = await find(query)
    const offset = history.head()
    // Missed: one note of her query among many others she may read (to everyone), which her query does not show.
    for (let i = 0; i < 20; i++) await notes.create({ text: `other ${i}`, to: null })
    await notes.create({ text: 'b', to: eve.id })
    await settled()
    resolutions = 0
    let list = records
    await live.watch({
      connection,
      path: 'notes',
      query,
      options: { resume: { offset, records } },
      find,
      send: (frame) => void ('id' in frame && (list = applyChanges(list, frame.changes))),
      answer: (given: WatchAnswer) => (list = given.records ?? list)
    })
    expect(list).toEqual(await find(query))
    expect(list.map((note) => note.text)).toEqual(['a', 'b'])
    // 'b' alone: the 20 notes her query rejects are not resolved for the replay.
    expect(resolutions).toBe(1)
  })
})
