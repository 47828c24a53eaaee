import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { LiveQueries } from '../../../src/application/live/index.js'
import { ConnectionProgress, type ProgressWatch } from '../../../src/application/live/progress.js'
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
  const find = async (query: Query) => (await app.service('messages').find({ query, paginate: false })) as Doc[]
  /** Everything sent to one connection: `live` frames with an id, and progress frames. */
  const watch = (connection: Connection, query: Query, options: unknown = {}) =>
    watchWith(live, { connection, path: 'messages', query, options, find })
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

  it('are not sent while a write of a watched service is still on its way to the views', async () => {
    const { app, live, create, publish, watch } = await setUp()
    // A resolver that holds a write back: the view is not current at the head until it lands.
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let holding = false
    const slow = resolve<Doc>({ seen: async () => (holding && (await held), true) })
    app.service('messages').hooks({ around: { all: [resolveResult(slow)] } })
    const connection: Connection = { provider: 'test' }
    const watched = await watch(connection, { room: 'a' })
    for (let n = 1; n <= 3; n++) await create('others', { n })
    const record = (await app.service('messages').create({ room: 'a', n: 4 })) as Doc
    holding = true
    publish({ path: 'messages', event: 'created', data: record })
    await create('others', { n: 5 })
    await sleep(40)
    expect(watched.sent).toEqual([])
    release()
    await sleep(40)
    // The frame went out after every event so far: the watch lags again only with more.
    for (let n = 6; n <= 8; n++) await create('others', { n })
    await sleep(40)
    expect(watched.sent).toEqual([
      expect.objectContaining({ id: watched.answer.id, changes: [expect.objectContaining({ type: 'added' })] }),
      { offset: expect.any(String) }
    ])
    await live.teardown()
  })
})

describe('ConnectionProgress', () => {
  type W = ProgressWatch & { current: boolean }
  const watches = (...sent: number[]) => new Map<unknown, W>(sent.map((at, n) => [n, { sent: at, current: true }]))

  it('tells a connection lagging by the event count at once, and one lagging less only after the age', () => {
    let now = 0
    const progress = new ConnectionProgress<string>({ everyMs: 1, events: 10, maxAgeMs: 1_000 }, () => now)
    const told: string[] = []
    const tell = (observed: number, connections: [string, Map<unknown, W>][]) =>
      progress.tell(
        connections,
        observed,
        (watch) => watch.current,
        (connection) => told.push(connection)
      )
    tell(20, [
      ['far', watches(20, 5)],
      ['near', watches(15)],
      ['live', watches(20)]
    ])
    expect(told).toEqual(['far'])
    now = 999
    tell(21, [['near', watches(15)]])
    expect(told).toEqual(['far'])
    now = 1_000
    tell(21, [['near', watches(15)]])
    expect(told).toEqual(['far', 'near'])
    // Told at 21: lagging again counts from there.
    now = 1_500
    tell(25, [['near', watches(15)]])
    expect(told).toEqual(['far', 'near'])
  })

  it('tells no connection with a watch that is not current, and counts its watches as sent when it tells', () => {
    const progress = new ConnectionProgress<string>({ everyMs: 1, events: 1, maxAgeMs: 0 })
    const told: string[] = []
    const busy = watches(0, 0)
    busy.get(1)!.current = false
    const ready = watches(0, 3)
    const tell = () =>
      progress.tell(
        [
          ['busy', busy],
          ['ready', ready]
        ],
        5,
        (watch) => watch.current,
        (connection) => told.push(connection)
      )
    tell()
    expect(told).toEqual(['ready'])
    expect([...ready.values()].map((watch) => watch.sent)).toEqual([5, 5])
    expect([...busy.values()].map((watch) => watch.sent)).toEqual([0, 0])
  })
})
