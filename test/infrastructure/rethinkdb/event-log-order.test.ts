import { afterAll, describe, expect, it } from '@jest/globals'
import { randomBytes } from 'node:crypto'
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
})
