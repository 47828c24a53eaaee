import { afterAll, describe, expect, it } from '@jest/globals'
import { randomBytes } from 'node:crypto'
import type { RDatum } from 'rethinkdb-ts'
import { Conflict } from '../../../src/domain/errors/errors.js'
import { silentLogger } from '../../../src/domain/logger.js'
import type { Data } from '../../../src/domain/service/service.js'
import { EventLog, type LoggedEvent } from '../../../src/infrastructure/rethinkdb/event-log.js'
import { RethinkDbEventHistory } from '../../../src/infrastructure/rethinkdb/rethinkdb-event-history.js'
import { RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { FakeClock } from '../../support/fake-clock.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

// Needs a real RethinkDB (RETHINKDB_URL, or Docker); skipped with the run's one loud line otherwise.
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

afterAll(async () => {
  await server?.stop()
})

/** One "instance": its own event log object (own feed) and a store writing through it. */
async function instance(logTable: string, table: string) {
  const log = new EventLog({ r: server!.r, db: server!.db, logger: silentLogger, table: logTable })
  const store = new RethinkDbStore({ r: server!.r, db: server!.db, table, events: log, directWrites: false })
  await store.init()
  const seen: LoggedEvent[] = []
  const history = new RethinkDbEventHistory({ log, clock: new FakeClock(), retentionMs: 60_000 })
  const offsets: string[] = []
  const stop = log.subscribe(table, (event) => {
    seen.push(event)
    offsets.push(history.append({ path: 'items', event: event.event, data: event.record }))
  })
  await log.whenLive()
  return { log, store, seen, history, offsets, stop }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20))
}

withServer("the event log's one order", () => {
  it('two instances writing concurrently publish every event once, numbered without gaps, in the same order', async () => {
    const logTable = `events_${randomBytes(4).toString('hex')}`
    const table = `items_${randomBytes(4).toString('hex')}`
    const a = await instance(logTable, table)
    const b = await instance(logTable, table)
    const writes = Array.from({ length: 60 }, (_, n) => (n % 2 === 0 ? a : b).store.create([{ n }], {}))
    await Promise.all(writes)
    await until(() => a.seen.length >= 60 && b.seen.length >= 60)
    const numbers = a.seen.map((event) => event.id)
    expect(numbers).toEqual(Array.from({ length: 60 }, (_, index) => numbers[0]! + index))
    expect(b.seen.map((event) => event.id)).toEqual(numbers)
    expect(b.seen.map((event) => (event.record as Data).n)).toEqual(a.seen.map((event) => (event.record as Data).n))
    expect(new Set(a.seen.map((event) => (event.record as Data).n)).size).toBe(60)
    // An offset from a means the same place on b.
    expect(b.offsets).toEqual(a.offsets)
    const later = await b.history.since(a.offsets[29]!)
    expect(later === 'unknown' ? later : later.map((event) => (event.data as Data).n)).toEqual(
      a.seen.slice(30).map((event) => (event.record as Data).n)
    )
    a.stop()
    b.stop()
    await Promise.all([a.log.stop(), b.log.stop()])
  }, 60_000)

  it('grouped creates: each caller gets its own records; a taken key fails only its caller', async () => {
    const logTable = `events_${randomBytes(4).toString('hex')}`
    const table = `items_${randomBytes(4).toString('hex')}`
    const a = await instance(logTable, table)
    await a.store.create([{ id: 'taken', n: -1 }], {})
    const calls = Array.from({ length: 20 }, (_, n) =>
      a.store.create(
        n === 7
          ? [
              { id: `own-${n}`, n },
              { id: 'taken', n }
            ]
          : [{ n }, { n: n + 100 }],
        {}
      )
    )
    const outcomes = await Promise.allSettled(calls)
    for (const [n, outcome] of outcomes.entries()) {
      if (n === 7) {
        expect(outcome.status).toBe('rejected')
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(Conflict)
      } else {
        expect(outcome).toMatchObject({ status: 'fulfilled', value: [{ n }, { n: n + 100 }] })
      }
    }
    // The failed caller's other record was undone; every other record is there once.
    expect(await a.store.get('own-7', { filter: { op: 'and', filters: [] }, sort: [], skip: 0 })).toBeNull()
    expect(await server!.r.db(server!.db).table(table).count().run()).toBe(1 + 19 * 2)
    a.stop()
    await a.log.stop()
  }, 60_000)

  it('a counter gone back behind the log (its soft update lost in a crash) never hands out a used number', async () => {
    const logTable = `events_${randomBytes(4).toString('hex')}`
    const table = `items_${randomBytes(4).toString('hex')}`
    const a = await instance(logTable, table)
    const b = await instance(logTable, table)
    const counter = server!.r.db(server!.db).table(`${logTable}_counter`).get('counter')
    await a.store.create([{ n: 0 }, { n: 1 }], {})
    await b.store.create([{ n: 2 }], {})
    await until(() => a.seen.length >= 3 && b.seen.length >= 3)
    // As after a crash that kept the log rows but not the counter's last updates.
    await counter.update({ seq: 1 }).run()
    await Promise.all([a.store.create([{ n: 3 }], {}), b.store.create([{ n: 4 }, { n: 5 }], {})])
    await a.store.create([{ n: 6 }], {})
    await until(() => a.seen.length >= 7 && b.seen.length >= 7)
    const numbers = a.seen.map((event) => event.id)
    // Numbers 1–3 stay those of the first events; the later ones follow them.
    expect(numbers.slice(0, 3)).toEqual([1, 2, 3])
    expect(new Set(numbers).size).toBe(7)
    expect(Math.min(...numbers.slice(3))).toBeGreaterThan(3)
    expect(b.seen.map((event) => event.id)).toEqual(numbers)
    expect(a.seen.map((event) => (event.record as Data).n).sort()).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(b.seen.map((event) => (event.record as Data).n)).toEqual(a.seen.map((event) => (event.record as Data).n))
    // An instance that starts meanwhile puts the counter back after the newest logged number at once.
    await counter.update({ seq: 0 }).run()
    await new EventLog({ r: server!.r, db: server!.db, logger: silentLogger, table: logTable }).setup()
    expect(await counter('seq').run()).toBe(Math.max(...numbers))
    for (const each of [a, b]) each.stop()
    await Promise.all([a.log.stop(), b.log.stop()])
  }, 60_000)

  it('moves a counter row kept in the log table (before it had its own) with its epoch, and numbers on after it', async () => {
    const logTable = `events_${randomBytes(4).toString('hex')}`
    const table = `items_${randomBytes(4).toString('hex')}`
    const { r, db } = server!
    // A log as an earlier version left it: its counter row among the events, 1–2 logged, 3 taken by a write that died.
    await r.db(db).tableCreate(logTable).run()
    await r
      .db(db)
      .table(logTable)
      .insert([
        { id: 'counter', seq: 3, epoch: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d' },
        {
          id: 1,
          ts: Date.now(),
          events: [
            { table, event: 'created', record: { n: 0 } },
            { table, event: 'created', record: { n: 1 } }
          ]
        }
      ])
      .run()
    const a = await instance(logTable, table)
    expect(a.log.epoch).toBe('0a1b2c3d4e5f')
    expect(await r.db(db).table(logTable).get('counter').run()).toBeNull()
    await a.store.create([{ n: 2 }], {})
    await until(() => a.seen.length >= 1)
    expect(a.seen.map((event) => [event.id, (event.record as Data).n])).toEqual([[4, 2]])
    a.stop()
    await a.log.stop()
  }, 60_000)

  it('logs one row per write, and still reads the one-event rows written before', async () => {
    const logTable = `events_${randomBytes(4).toString('hex')}`
    const table = `items_${randomBytes(4).toString('hex')}`
    const a = await instance(logTable, table)
    const log = server!.r.db(server!.db).table(logTable)
    await a.store.create([{ n: 0 }, { n: 1 }, { n: 2 }], {})
    await until(() => a.seen.length >= 3)
    expect(await log.between(0, Number.MAX_SAFE_INTEGER).count().run()).toBe(1)
    // A row of the earlier layout (one event in its own fields) under the next number.
    const seq = (
      await server!.r
        .db(server!.db)
        .table(`${logTable}_counter`)
        .get('counter')
        .update((row: RDatum) => ({ seq: row('seq').add(1) }), { returnChanges: true })
        .run()
    ).changes![0]!.new_val.seq as number
    await log.insert({ id: seq, ts: Date.now(), table, event: 'created', record: { id: 'old', n: 3 } }).run()
    await a.store.create([{ n: 4 }], {})
    await until(() => a.seen.length >= 5)
    expect(a.seen.map((event) => [event.id, (event.record as Data).n])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
      [4, 3],
      [5, 4]
    ])
    a.stop()
    await a.log.stop()
  }, 60_000)

  it('settled() answers once every event logged before it was asked has been handed out, a number never logged aside', async () => {
    const logTable = `events_${randomBytes(4).toString('hex')}`
    const table = `items_${randomBytes(4).toString('hex')}`
    const a = await instance(logTable, table)
    // Another instance's log object that does not follow the log: it never hands anything out.
    const idle = new EventLog({ r: server!.r, db: server!.db, logger: silentLogger, table: logTable })
    await idle.setup()
    await Promise.all([0, 1, 2].map((n) => a.store.create([{ n }], {})))
    expect(await a.log.settled(10_000)).toBe(true)
    // Answered after the events were handed out, not when they were written.
    expect(a.seen.map((event) => (event.record as Data).n).sort()).toEqual([0, 1, 2])
    expect(await idle.settled(50)).toBe(false)
    // A number taken by a write that died before logging it never comes: settled() does not wait for it.
    await server!.r
      .db(server!.db)
      .table(`${logTable}_counter`)
      .get('counter')
      .update((row: RDatum) => ({ seq: row('seq').add(1) }))
      .run()
    expect(await a.log.settled(2_000)).toBe(true)
    a.stop()
    await a.log.stop()
  }, 60_000)
})
