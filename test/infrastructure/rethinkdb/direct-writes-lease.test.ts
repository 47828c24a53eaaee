import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { randomBytes } from 'node:crypto'
import type { RDatum } from 'rethinkdb-ts'
import { silentLogger } from '../../../src/domain/logger.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { Data } from '../../../src/domain/service/service.js'
import type { StoreChange } from '../../../src/domain/store/store.js'
import { EventLog } from '../../../src/infrastructure/rethinkdb/event-log.js'
import { RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { RowLease, type LeaseRow } from '../../../src/infrastructure/rethinkdb/row-lease.js'
import { until } from '../../support/app-instances.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

// Integration suite: it needs a real RethinkDB (RETHINKDB_URL, RETHINKDB_BIN or Docker); without one
// it is skipped and the run prints one loud line saying so.
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const unique = (purpose: string): string => `${purpose}_${randomBytes(4).toString('hex')}`

afterAll(async () => {
  await server?.stop()
})

withServer('RowLease on a real RethinkDB', () => {
  const table = unique('leases')
  const leases = () => server!.r.db(server!.db).table<LeaseRow>(table)
  beforeAll(async () => {
    await server!.r.db(server!.db).tableCreate(table).run()
  })

  function lease(id: string, holder: string, ttlMs = 1_000) {
    const state = { acquired: 0, lost: 0 }
    const instance = new RowLease({
      r: server!.r,
      table: leases,
      id,
      holder,
      name: id,
      ttlMs,
      logger: silentLogger,
      onAcquired: () => state.acquired++,
      onLost: () => state.lost++
    })
    return Object.assign(state, { lease: instance })
  }

  it('has one holder among instances that all ask at once, and passes to another when the holder lets go', async () => {
    const all = Array.from({ length: 5 }, (_, index) => lease('role-a', `instance-${index}`))
    all.forEach(({ lease }) => lease.start())
    await Promise.all(all.map(({ lease }) => lease.whenAnswered()))
    // Sampled over several renewals: never two holders, always one.
    for (let sample = 0; sample < 20; sample++) {
      expect(all.filter(({ lease }) => lease.held)).toHaveLength(1)
      await sleep(50)
    }
    const holder = all.find(({ lease }) => lease.held)!
    expect(holder.acquired).toBe(1)
    const row = await leases().get('role-a').run()
    expect(row?.holder).toBe((holder.lease as unknown as { options: { holder: string } }).options.holder)

    await holder.lease.stop()
    expect(holder.lease.held).toBe(false)
    const others = all.filter((each) => each !== holder)
    // The others try every ttl / 5 = 200 ms.
    await until('another instance holds the lease', () => others.some(({ lease }) => lease.held), 2_000)
    expect(others.filter(({ lease }) => lease.held)).toHaveLength(1)
    await Promise.all(others.map(({ lease }) => lease.stop()))
    expect(await leases().get('role-a').run()).toBeNull()
  })

  it('is taken over once a dead holder’s lease expired on the server, not before', async () => {
    const r = server!.r
    await leases()
      .insert({ id: 'role-b', holder: 'dead', until: r.now().add(1.5) } as never)
      .run()
    const taker = lease('role-b', 'taker')
    taker.lease.start()
    await taker.lease.whenAnswered()
    expect(taker.lease.held).toBe(false)
    await sleep(800)
    expect(taker.lease.held).toBe(false)
    await until('the taker holds the lease', () => taker.lease.held, 3_000)
    expect(taker.acquired).toBe(1)
    await taker.lease.stop()
  })

  it('says it lost the lease when another holder took the row, and guards queries by the row on the server', async () => {
    const r = server!.r
    const holder = lease('role-c', 'holder', 5_000)
    holder.lease.start()
    await until('the holder holds the lease', () => holder.lease.held, 10_000)
    expect(await r.branch(holder.lease.guard(), 'yes', 'no').run()).toBe('yes')
    // Someone else's row now (as after the server lost the holder's renewal in a crash and another took it).
    await leases()
      .get('role-c')
      .update({ holder: 'usurper' } as never)
      .run()
    expect(await r.branch(holder.lease.guard(), 'yes', 'no').run()).toBe('no')
    await until('the holder says it lost the lease', () => holder.lost === 1, 3_000)
    expect(holder.lease.held).toBe(false)
    await holder.lease.stop()
    // It does not delete a row it does not hold.
    expect((await leases().get('role-c').run())?.holder).toBe('usurper')
  })

  it('guards nothing for a row that does not exist', async () => {
    const nobody = lease('role-d', 'nobody')
    expect(await server!.r.branch(nobody.lease.guard(), 'yes', 'no').run()).toBe('no')
  })
})

withServer('direct writes with several instances on a real RethinkDB', () => {
  /** One instance's view of a table: its own event log (as a process has) and store. */
  async function instance(table: string) {
    const events = new EventLog({ r: server!.r, db: server!.db, logger: silentLogger })
    const store = new RethinkDbStore({ r: server!.r, db: server!.db, table, events })
    await store.init()
    const changes: StoreChange<Data>[] = []
    const stop = store.watch!((change) => changes.push(change))
    await store.whenWatching()
    return {
      store,
      changes,
      follows: () => (store as unknown as { watcher: { followsDirectWrites: boolean } }).watcher.followsDirectWrites,
      close: async () => {
        stop()
        await store.close()
        await events.stop()
      }
    }
  }
  const of = (changes: StoreChange<Data>[], name: string) =>
    changes.filter((change) => change.record.name === name).map((change) => change.event)

  it('one instance follows the table; a direct write reaches every instance once, through the log', async () => {
    const table = unique('direct')
    const [a, b, c] = [await instance(table), await instance(table), await instance(table)]
    const all = [a, b, c]
    expect(all.filter((each) => each.follows())).toHaveLength(1)
    const rows = server!.r.db(server!.db).table(table)
    await rows.insert({ id: 'd1', name: 'direct' }).run()
    await rows.get('d1').update({ age: 2 }).run()
    await until(
      'every instance has the direct write',
      () => all.every((each) => of(each.changes, 'direct').length >= 1),
      10_000
    )
    // Squashed or not (50 ms), each instance sees the same events once: the log's.
    await sleep(2_500)
    const seen = of(a.changes, 'direct')
    expect(seen[0]).toBe('created')
    for (const each of all) expect(of(each.changes, 'direct')).toEqual(seen)
    // The write is in the log: one row for it (or two, unsquashed), like a store's write.
    const logged = await server!.r
      .db(server!.db)
      .table('plumage_events')
      .filter((row: RDatum) => row('events')(0)('table').eq(table))
      .count()
      .run()
    expect(logged).toBe(seen.length)
    // A store's own write is published once too, not also as a direct write.
    await b.store.create([{ name: 'store write' }], parseQuery({}))
    await until(
      'every instance has the store write',
      () => all.every((each) => of(each.changes, 'store write').length === 1),
      10_000
    )
    await sleep(2_000)
    for (const each of all) expect(of(each.changes, 'store write')).toEqual(['created'])
    await Promise.all(all.map((each) => each.close()))
  })

  it('another instance takes over when the follower stops, and the next direct write is published', async () => {
    const table = unique('direct')
    const a = await instance(table)
    const b = await instance(table)
    const [follower, other] = a.follows() ? [a, b] : [b, a]
    expect(other.follows()).toBe(false)
    const rows = server!.r.db(server!.db).table(table)
    // Made just before the stop: the stopping follower still logs it (it drains before letting go).
    await rows.insert({ id: 'before', name: 'before stop' }).run()
    await sleep(100)
    await follower.close()
    await until('the other instance follows the table', () => other.follows(), 3_000)
    await other.store.whenWatching()
    await rows.insert({ id: 'after', name: 'after stop' }).run()
    await until('the direct write after the stop arrives', () => of(other.changes, 'after stop').length === 1, 10_000)
    expect(of(other.changes, 'before stop')).toEqual(['created'])
    await sleep(2_000)
    expect(of(other.changes, 'after stop')).toEqual(['created'])
    await other.close()
  })

  it("a listener that comes while the last one's stop still drains gets every event after it, once", async () => {
    const table = unique('direct')
    const events = new EventLog({ r: server!.r, db: server!.db, logger: silentLogger })
    const store = new RethinkDbStore({ r: server!.r, db: server!.db, table, events })
    await store.init()
    const stopFirst = store.watch!(() => undefined)
    await store.whenWatching()
    // A direct write waits ~1.5 s for the log: the stop that follows drains it before letting go.
    await server!.r.db(server!.db).table(table).insert({ id: 'pending', name: 'pending' }).run()
    await sleep(100)
    stopFirst()
    const changes: StoreChange<Data>[] = []
    const stopSecond = store.watch!((change) => changes.push(change))
    await until('the pending direct write arrives', () => of(changes, 'pending').length === 1, 10_000)
    await store.whenWatching()
    await store.create([{ name: 'after' }], parseQuery({}))
    await until('the store write arrives', () => of(changes, 'after').length === 1, 10_000)
    await sleep(1_000)
    expect(of(changes, 'pending')).toEqual(['created'])
    expect(of(changes, 'after')).toEqual(['created'])
    stopSecond()
    await store.close()
    await events.stop()
  })
})
