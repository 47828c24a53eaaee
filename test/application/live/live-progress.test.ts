import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries } from '../../../src/application/live/index.js'
import {
  ConnectionProgress,
  type FeedPoint,
  type ProgressOptions,
  type ProgressWatch
} from '../../../src/application/live/progress.js'
import { resolve, resolveResult } from '../../../src/application/resolvers/index.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import type { PublishedEvent } from '../../../src/domain/realtime/event-history.js'
import type { Connection, Query } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { InMemoryEventHistory } from '../../../src/infrastructure/store-commons/history/in-memory-event-history.js'
import { watchWith } from './watch-request.js'

/*
 * Progress frames (ADR 0019, Resume): a quiet watch's offset moves with `{ offset }` frames, sent to a connection
 * whose watches lag, and only when every one of them is current — so its resume replays little, and never resets
 * for a history that moved on while it was connected.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function setUp(retentionMs = 60_000) {
  let now = 0
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()))
  app.use('others', new AdapterService(new InMemoryStore()))
  const history = new InMemoryEventHistory({ now: () => now }, retentionMs)
  const live = new LiveQueries(app, { maxWatches: 10, history, progress: { everyMs: 10, events: 3, maxAgeMs: 60_000 } })
  await app.setup()
  const publish = (event: PublishedEvent) => live.observe(event, history.append(event))
  const create = async (path: string, data: Doc) =>
    publish({ path, event: 'created', data: (await app.service(path).create(data)) as Doc })
  /** Everything sent to one watch of a connection: `live` frames with an id, and progress frames. */
  const watch = (connection: Connection, query: Query, options: unknown = {}, path = 'messages') => {
    const find = async (query: Query) => (await app.service(path).find({ query, paginate: false })) as Doc[]
    return watchWith(live, { connection, path, query, options, find })
  }
  return { app, live, history, create, publish, watch, advance: (ms: number) => (now += ms) }
}

describe('progress frames', () => {
  it('tell a quiet watch the head, so that it resumes from there past the history it would have missed', async () => {
    const { live, history, create, watch, advance } = await setUp(1_000)
    await create('messages', { room: 'b', n: 0 })
    const quiet = await watch({ provider: 'test' }, { room: 'a', $sort: { n: 1 } })
    expect(quiet.answer.records).toEqual([])
    for (let n = 1; n <= 5; n++) await create('others', { n })
    await sleep(40)
    const progress = quiet.sent.filter((frame) => !('id' in (frame as object)))
    expect(progress).toEqual([{ offset: history.head() }])
    // Later, the events before the progress are out of the history: a resume from the progress is still exact.
    advance(2_000)
    await create('others', { n: 6 })
    await create('messages', { room: 'a', n: 7 })
    const resumed = await watch(
      { provider: 'test' },
      { room: 'a', $sort: { n: 1 } },
      {
        resume: { offset: (progress[0] as { offset: string }).offset, records: [] }
      }
    )
    expect(resumed.answer.reset).toBeUndefined()
    expect(resumed.sent).toEqual([expect.objectContaining({ changes: [expect.objectContaining({ type: 'added' })] })])
    // From the watch's own old offset it is a reset: that is what the progress frame avoided.
    const old = await watch(
      { provider: 'test' },
      { room: 'a', $sort: { n: 1 } },
      {
        resume: { offset: quiet.answer.offset!, records: [] }
      }
    )
    expect(old.answer.reset).toBe(true)
    await live.teardown()
  })

  it('a resume that missed no change moves the watch to where its view is, so that the next resume starts there', async () => {
    const { live, history, create, watch, advance } = await setUp(1_000)
    const connection: Connection = { provider: 'test' }
    await create('others', { n: 0 })
    const first = await watch(connection, { room: 'a', $sort: { n: 1 } })
    for (let n = 1; n <= 2; n++) await create('others', { n })
    // Cut before any progress frame: the resume finds nothing missed, and is told the head.
    const resumed = await watch(
      connection,
      { room: 'a', $sort: { n: 1 } },
      { resume: { offset: first.answer.offset!, records: [] } }
    )
    expect(resumed.answer).toEqual({ id: resumed.answer.id, offset: first.answer.offset, changes: [] })
    expect(resumed.sent).toEqual([{ id: resumed.answer.id, offset: history.head(), changes: [] }])
    // Cut again and again, each time sooner than progress: from the offset it was told, never a reset.
    advance(2_000)
    await create('others', { n: 3 })
    const again = await watch(
      connection,
      { room: 'a', $sort: { n: 1 } },
      { resume: { offset: history.head()!, records: [] } }
    )
    expect(again.answer.reset).toBeUndefined()
    const stale = await watch(
      connection,
      { room: 'a', $sort: { n: 1 } },
      { resume: { offset: first.answer.offset!, records: [] } }
    )
    expect(stale.answer.reset).toBe(true)
    await live.teardown()
  })

  it('a refill read long after the view was made sends its frames at the head, not at the offset it was made at', async () => {
    const { app, live, history, create, publish, watch } = await setUp()
    const made: Doc[] = []
    for (let n = 1; n <= 3; n++) {
      made.push((await app.service('messages').create({ room: 'a', n })) as Doc)
      publish({ path: 'messages', event: 'created', data: made.at(-1)! })
    }
    // A one-record window and its one-record buffer: removing both records it knows makes the view read again.
    const watched = await watch({ provider: 'test' }, { room: 'a', $sort: { n: 1 }, $limit: 1 }, {})
    for (let n = 0; n < 5; n++) await create('others', { n })
    for (const record of made.slice(0, 2)) {
      await app.service('messages').remove(record.id as number)
      publish({ path: 'messages', event: 'removed', data: record })
    }
    await sleep(20)
    const offsets = watched.frames.map((frame) => frame.offset)
    expect(watched.frames.flatMap((frame) => frame.changes.map((change) => change.type))).toContain('added')
    // The client keeps the last frame's offset and resumes from it: it must be the head, where the list now is.
    expect(offsets.at(-1)).toBe(history.head())
    await live.teardown()
  })

  /** Holds back the resolution of the next writes of `messages` (an event resolver) until `release`. */
  function holdWrites(app: App) {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let holding = false
    const slow = resolve<Doc>({ seen: async () => (holding && (await held), true) })
    app.service('messages').hooks({ around: { all: [resolveResult(slow)] } })
    return { hold: () => (holding = true), release }
  }

  it('while a write of a watched service is on its way to the views, tell the point before it', async () => {
    const { app, live, history, create, publish, watch } = await setUp()
    const writes = holdWrites(app)
    const connection: Connection = { provider: 'test' }
    const watched = await watch(connection, { room: 'a' })
    for (let n = 1; n <= 3; n++) await create('others', { n })
    const beforeHeld = history.head()
    const record = (await app.service('messages').create({ room: 'a', n: 4 })) as Doc
    writes.hold()
    publish({ path: 'messages', event: 'created', data: record })
    await create('others', { n: 5 })
    await sleep(40)
    // Steady writes keep a queue of them: progress is not held back, it names the last point the view is current at.
    expect(watched.sent).toEqual([{ offset: beforeHeld }])
    writes.release()
    await sleep(40)
    for (let n = 6; n <= 8; n++) await create('others', { n })
    await sleep(40)
    expect(watched.sent).toEqual([
      { offset: beforeHeld },
      expect.objectContaining({ id: watched.answer.id, changes: [expect.objectContaining({ type: 'added' })] }),
      { offset: history.head() }
    ])
    // A resume from the point before the held write is sent that write once.
    const resumed = await watch(connection, { room: 'a' }, { resume: { offset: beforeHeld, records: [] } })
    expect(resumed.answer.reset).toBeUndefined()
    expect(resumed.frames.flatMap((frame) => frame.changes)).toEqual([
      expect.objectContaining({ type: 'added', record: expect.objectContaining({ n: 4 }) })
    ])
    await live.teardown()
  })

  it('name each watch while a watch of another service was sent a frame past the point of a queued write', async () => {
    const { app, live, history, create, publish, watch } = await setUp()
    const writes = holdWrites(app)
    const connection: Connection = { provider: 'test' }
    const messages = await watch(connection, { room: 'a' })
    const others = await watch(connection, { kind: 'x' }, {}, 'others')
    await create('others', { n: 0 })
    const record = (await app.service('messages').create({ room: 'a', n: 1 })) as Doc
    const beforeHeld = history.head()
    writes.hold()
    publish({ path: 'messages', event: 'created', data: record })
    // The watch of `others` is sent a frame past the point `messages` views are current at.
    await create('others', { kind: 'x', n: 2 })
    for (let n = 3; n <= 5; n++) await create('others', { n })
    await sleep(40)
    // The earliest point would move the `others` watch back before a frame it applied: no frame for the connection.
    // Each watch is told its own point instead: `messages` the point before the queued write, `others` the head.
    expect(messages.sent).toEqual([{ id: messages.answer.id, offset: beforeHeld, changes: [] }])
    expect(others.frames.map((frame) => frame.changes.length)).toEqual([1, 0])
    expect(others.frames.at(-1)!.offset).toBe(history.head())
    writes.release()
    await sleep(40)
    expect(messages.sent.slice(1)).toEqual([
      expect.objectContaining({ id: messages.answer.id, changes: [expect.objectContaining({ type: 'added' })] }),
      { offset: history.head() }
    ])
    await live.teardown()
  })
})

describe('ConnectionProgress', () => {
  type W = ProgressWatch & { current?: FeedPoint }
  const point = (count: number): FeedPoint => ({ offset: `o${count}`, count })
  /** Watches last sent frames at these counts, all current at `at`. */
  const watches = (at: number, ...sent: number[]) =>
    new Map<unknown, W>(sent.map((count, n) => [n, { sent: count, current: point(at) }]))
  const progressOf = (options: ProgressOptions, now?: () => number) => {
    const progress = new ConnectionProgress<string>(options, now)
    const told: [string, string][] = []
    const toldWatches: [W, string][] = []
    const tell = (observed: number, connections: [string, Map<unknown, W>][]) =>
      progress.tell(
        connections,
        observed,
        (watch) => watch.current,
        (connection, _, { offset }) => told.push([connection, offset]),
        (watch, { offset }) => toldWatches.push([watch, offset])
      )
    return { told, toldWatches, tell }
  }

  it('tells a connection lagging by the event count at once, and one lagging less only after the age', () => {
    let now = 0
    const { told, tell } = progressOf({ everyMs: 1, events: 10, maxAgeMs: 1_000 }, () => now)
    tell(20, [
      ['far', watches(20, 20, 5)],
      ['near', watches(20, 15)],
      ['live', watches(20, 20)]
    ])
    expect(told).toEqual([['far', 'o20']])
    const near = watches(21, 15)
    now = 999
    tell(21, [['near', near]])
    expect(told).toHaveLength(1)
    now = 1_000
    tell(21, [['near', near]])
    expect(told).toEqual([
      ['far', 'o20'],
      ['near', 'o21']
    ])
    // Told at 21: lagging again counts from there.
    for (const watch of near.values()) watch.current = point(25)
    now = 1_500
    tell(25, [['near', near]])
    expect(told).toHaveLength(2)
  })

  it('tells the earliest point of its watches, or while one is not current or was sent past it each its own', () => {
    const { told, toldWatches, tell } = progressOf({ everyMs: 1, events: 1, maxAgeMs: 0 })
    const busy = watches(5, 0, 0)
    busy.get(1)!.current = undefined
    // A watch whose service has a write on its way is current before it, at 4.
    const queued = watches(5, 0, 3)
    queued.get(0)!.current = point(4)
    const past = watches(5, 0, 5)
    past.get(0)!.current = point(4)
    tell(5, [
      ['busy', busy],
      ['queued', queued],
      ['past', past]
    ])
    expect(told).toEqual([['queued', 'o4']])
    expect([...queued.values()].map((watch) => watch.sent)).toEqual([4, 4])
    // The connection with a watch mid-read: its current watch is told alone; the busy one keeps its offset.
    // The one with a watch sent past the other's point: each is told its own point, none moves back.
    expect(toldWatches).toEqual([
      [busy.get(0), 'o5'],
      [past.get(0), 'o4']
    ])
    expect([...busy.values()].map((watch) => watch.sent)).toEqual([5, 0])
    expect([...past.values()].map((watch) => watch.sent)).toEqual([4, 5])
  })

  it('tells a watch on its own when it lags by the event count, or the connection was told nothing for the age', () => {
    let now = 0
    const { toldWatches, tell } = progressOf({ everyMs: 1, events: 10, maxAgeMs: 1_000 }, () => now)
    const mixed = watches(30, 5, 25, 0)
    mixed.get(2)!.current = undefined
    tell(30, [['mixed', mixed]])
    // 2 is mid-read, 1 lags by 5 only: 0, which lags by 25, is told.
    expect(toldWatches).toEqual([[mixed.get(0), 'o30']])
    now = 500
    tell(31, [['mixed', mixed]])
    expect(toldWatches).toHaveLength(1)
    // Past the age since the connection was last told, every current watch behind its point is.
    now = 1_000
    for (const watch of mixed.values()) if (watch.current) watch.current = point(31)
    tell(31, [['mixed', mixed]])
    expect(toldWatches.slice(1)).toEqual([
      [mixed.get(0), 'o31'],
      [mixed.get(1), 'o31']
    ])
  })
})
