import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import { applyChanges } from '../../../src/domain/query/live-window.js'
import { builtInstances, type Instance, type Instances } from '../../support/app-instances.js'
import { connectSocket, signup } from '../../support/reference-server.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'
import { call, findRecords, RawWatch, until, type Frame } from './live-client.js'

/*
 * A watch moved to a RethinkDB instance started after its offset (ADR 0019, Resume): the new instance has not
 * published the events before its start, but the shared event log still holds them; it reads the log's rows between
 * the watch's offset and its start (RethinkDbEventHistory's `between`) and, when none of them concerns the watch,
 * replays the events after its start: every missed change exactly once, in order, no reset. A watch that an event of
 * that gap concerns gets a reset (a fresh, correct list). Two real processes of the built server on one database
 * (RethinkDB's driver keeps one pool per process). Needs RethinkDB (RETHINKDB_URL, RETHINKDB_BIN or Docker);
 * otherwise the loud SKIPPED line.
 */
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

interface Answer {
  id: string
  offset?: string
  records?: Doc[]
  changes?: unknown[]
  reset?: true
}

withServer('live queries on a RethinkDB instance started after the watch', () => {
  let instances: Instances
  const running: Instance[] = []
  const sockets: Socket[] = []
  const env = () => ({ RETHINKDB_URL: `rethinkdb://${server!.host}:${server!.port}/${server!.db}` })
  const open = async (url: string, token: string) => {
    const socket = await connectSocket(url, token)
    sockets.push(socket)
    return socket
  }

  beforeAll(async () => {
    instances = await builtInstances('live-rdb')
  }, 60_000)

  afterAll(async () => {
    // An instance's errors, to tell why a call failed.
    for (const instance of running)
      for (const line of instance.logs.filter((entry) => entry.level >= 50))
        process.stderr.write(`instance error: ${JSON.stringify(line)}\n`)
    for (const socket of sockets) socket.disconnect()
    for (const instance of running) await instance.stop()
    await instances?.cleanup()
    await server?.stop()
  })

  it('resumes a quiet watch from the log with every missed change once, and resets one the gap concerns', async () => {
    const a = await instances.start(env())
    running.push(a)
    const alice = await signup(a.url, 'alice-rdb@example.com')
    const writer = await open(a.url, alice.token)
    const ids = new Map<number, string>()
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8])
      ids.set(n, (await call<{ id: string }>(writer, 'create', 'messages', { text: `m${n}`, tag: 'rdb', n })).id)
    const top = { tag: 'rdb', $sort: { n: -1 }, $limit: 3 }
    const bottom = { tag: 'rdb', $sort: { n: 1 }, $limit: 2 }
    const first = await open(a.url, alice.token)
    const [topWatch, bottomWatch] = [
      await RawWatch.start(first, 'messages', top),
      await RawWatch.start(first, 'messages', bottom)
    ]
    const ns = (list: Doc[]) => list.map((row) => row.n)
    expect(ns(topWatch.list)).toEqual([8, 7, 6])
    expect(ns(bottomWatch.list)).toEqual([1, 2])
    first.disconnect()

    // Before B starts: writes beyond the top window (its buffer patched, one created below, another tag), one of
    // which enters the bottom window.
    await call(writer, 'patch', 'messages', ids.get(5)!, { text: 'still fifth' })
    await call(writer, 'create', 'messages', { text: 'm0', tag: 'rdb', n: 0 })
    await call(writer, 'create', 'messages', { text: 'elsewhere', tag: 'other', n: 100 })
    const b = await instances.start(env())
    running.push(b)
    const onB = await open(b.url, alice.token)
    const follower = await RawWatch.start(onB, 'messages', { tag: 'rdb', $sort: { n: -1 }, $limit: 1 })

    // After B started: the top window loses 8 (5 refills it from beyond), then 9 enters.
    await call(writer, 'remove', 'messages', ids.get(8)!)
    await call(writer, 'create', 'messages', { text: 'm9', tag: 'rdb', n: 9 })
    expect(await until(() => follower.list[0]?.n === 9, 10_000)).toBe(true)

    const back = await open(b.url, alice.token)
    const frames: Frame[] = []
    back.on('live', (frame: Frame) => frames.push(frame))
    const resumed = await call<Answer>(back, 'watch', 'messages', top, {
      resume: { offset: topWatch.offset, records: topWatch.list }
    })
    expect(resumed).toEqual({ id: resumed.id, offset: topWatch.offset, changes: [] })
    const reset = await call<Answer>(back, 'watch', 'messages', bottom, {
      resume: { offset: bottomWatch.offset, records: bottomWatch.list }
    })
    expect(reset.reset).toBe(true)
    expect(ns(reset.records!)).toEqual([0, 1])

    // Each missed change once, in order, each with its own offset.
    expect(await until(() => frames.filter((frame) => frame.id === resumed.id).length >= 2, 5000)).toBe(true)
    const mine = () => frames.filter((frame) => frame.id === resumed.id)
    const lists: unknown[][] = []
    let list = topWatch.list
    for (const frame of mine()) lists.push(ns((list = applyChanges(list, frame.changes))))
    expect(lists).toEqual([
      [7, 6, 5],
      [9, 7, 6]
    ])
    const offsets = mine().map((frame) => frame.offset!)
    expect(new Set(offsets).size).toBe(2)
    expect(ns(await findRecords(back, 'messages', top))).toEqual([9, 7, 6])

    // Then live on B.
    await call(writer, 'patch', 'messages', ids.get(7)!, { n: 10 })
    expect(await until(() => mine().length === 3, 5000)).toBe(true)
    expect(ns(applyChanges(list, mine()[2]!.changes))).toEqual([10, 9, 6])
  }, 120_000)
})
