import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from '@jest/globals'
import type { RDatum } from 'rethinkdb-ts'
import { Conflict } from '../../../src/domain/errors/errors.js'
import { silentLogger } from '../../../src/domain/logger.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { Data, Params } from '../../../src/domain/service/service.js'
import type { KeyedWrite } from '../../../src/domain/store/keyed-write.js'
import { EventLog } from '../../../src/infrastructure/rethinkdb/event-log.js'
import { KEYS_TABLE, type KeyRow } from '../../../src/infrastructure/rethinkdb/rethinkdb-keyed-writes.js'
import { RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { keyRowId } from '../../../src/infrastructure/store-commons/keyed-writes/index.js'
import { makeKeyedWrite } from '../../../src/testing/index.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

/*
 * What the kit's contract cannot reach on RethinkDB: a keyed write whose query was cut after its commit (the log
 * row, marked with its key) but before the key's row got its answer is answered from the log row; a key in flight
 * with no commit is refused with 409 after the wait and never written; a repeat waiting for a key in flight gets
 * its answer as soon as it has one. The cut query is made by hand: the states it leaves are written directly.
 */
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip
afterAll(async () => {
  await server?.stop()
})

const ALL = parseQuery({})
const run = randomBytes(4).toString('hex')
const keyed = (name: string, waitMs = 2_000): Params => ({
  idempotency: { ...makeKeyedWrite(`${run} ${name}`, 'print'), waitMs } satisfies KeyedWrite
})

withServer('RethinkDB keyed writes on a real server', () => {
  const keys = () => server!.r.db(server!.db).table<KeyRow>(KEYS_TABLE)
  const open = async (retentionMs?: number, traceparent?: () => string) => {
    const events = new EventLog({
      r: server!.r,
      db: server!.db,
      logger: silentLogger,
      ...(retentionMs ? { retentionMs, table: `events_${run}` } : {}),
      ...(traceparent ? { traceparent } : {})
    })
    const store = new RethinkDbStore({
      r: server!.r,
      db: server!.db,
      table: `keyed_${run}_${randomBytes(3).toString('hex')}`,
      events
    })
    await store.init()
    stores.push(store)
    return store
  }
  const stores: RethinkDbStore[] = []
  afterAll(async () => {
    for (const store of stores) await store.close()
  })
  const rowId = (name: string) => keyRowId(makeKeyedWrite(`${run} ${name}`))

  it('answers a key whose query was cut after its log row from that row, and copies the answer to the key', async () => {
    const store = await open()
    const [created] = await store.create([{ text: 'cut' }], {}, keyed('cut'))
    // A keyed create's answer is in its log row (its commit) only, as a keyed write's whose writer stopped before
    // copying it: the key without answer.
    expect(await keys().get(rowId('cut')).run()).not.toHaveProperty('answer')
    const params = keyed('cut')
    expect(await store.create([{ text: 'cut' }], {}, params)).toEqual([created])
    expect(params.idempotency).toMatchObject({ handled: true, replayed: true })
    expect(await store.find(ALL)).toHaveLength(1)
    expect((await keys().get(rowId('cut')).run())?.answer).toEqual([created])
    // The kit's answer() rolls forward too.
    await keys()
      .get(rowId('cut'))
      .replace((row: RDatum) => row.without('answer'))
      .run()
    expect(await store.keyedWrites.answer(keyed('cut').idempotency as KeyedWrite)).toEqual({ result: [created] })
    // A key's row lost altogether (its claim is soft: a server crash) is made again from the log row, not written.
    await keys().get(rowId('cut')).delete().run()
    expect(await store.create([{ text: 'cut' }], {}, keyed('cut'))).toEqual([created])
    expect(await store.find(ALL)).toHaveLength(1)
    expect((await keys().get(rowId('cut')).run())?.answer).toEqual([created])
  })

  it('refuses a repeat of a key in flight with no commit (409) after the wait, and writes nothing', async () => {
    const store = await open()
    // The state a query cut between its claim and its write leaves (or a first request still running).
    await keys()
      .insert({ id: rowId('stuck'), fingerprint: 'print', claim: 'gone', expiresAt: server!.r.now().add(60) } as never)
      .run()
    const started = Date.now()
    await expect(store.create([{ text: 'stuck' }], {}, keyed('stuck', 300))).rejects.toBeInstanceOf(Conflict)
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    await expect(store.patch(null, { n: 1 }, ALL, keyed('stuck', 100))).rejects.toMatchObject({ code: 409 })
    expect(await store.find(ALL)).toEqual([])
  })

  it('answers a repeat waiting for a key in flight as soon as the key has its answer', async () => {
    const store = await open()
    const answer: Data[] = [{ id: 'first', text: 'first' }]
    await keys()
      .insert({ id: rowId('wait'), fingerprint: 'print', claim: 'first', expiresAt: server!.r.now().add(60) } as never)
      .run()
    const repeat = store.create([{ text: 'second' }], {}, keyed('wait'))
    await new Promise((resolve) => setTimeout(resolve, 150))
    await keys().get(rowId('wait')).update({ answer }).run()
    expect(await repeat).toEqual(answer)
    expect(await store.find(ALL)).toEqual([])
  })

  it('copies the answer of a keyed write to its key before the log prunes its row', async () => {
    // A log that keeps events 300 ms, followed (a watch), so that its pruning runs every 75 ms.
    const store = await open(300)
    const stop = store.watch!(() => undefined)
    try {
      const [created] = await store.create([{ text: 'pruned' }], {}, keyed('pruned'))
      // A keyed create's answer is in its log row only (its commit), until asked for or pruned.
      expect(await keys().get(rowId('pruned')).run()).not.toHaveProperty('answer')
      const log = server!.r.db(server!.db).table(`events_${run}`)
      for (
        let tries = 0;
        tries < 100 && (await log.getAll(rowId('pruned'), { index: 'keys' }).count().run()) > 0;
        tries++
      )
        await new Promise((resolve) => setTimeout(resolve, 50))
      expect(await log.getAll(rowId('pruned'), { index: 'keys' }).count().run()).toBe(0)
      expect((await keys().get(rowId('pruned')).run())?.answer).toEqual([created])
      const params = keyed('pruned')
      expect(await store.create([{ text: 'pruned' }], {}, params)).toEqual([created])
      expect(await store.find(ALL)).toHaveLength(1)
    } finally {
      stop()
    }
  })

  it("logs each grouped keyed create's own traceparent (its query's function is built once, the trace passed in)", async () => {
    let span = 0
    const store = await open(undefined, () => `00-${String(++span).padStart(32, '0')}-${'0'.repeat(15)}1-01`)
    const [one] = await store.create([{ text: 'traced one' }], {}, keyed('traced one'))
    const [two] = await store.create([{ text: 'traced two' }], {}, keyed('traced two'))
    const log = server!.r.db(server!.db).table('plumage_events')
    const logged = async (name: string) =>
      (await log.getAll(rowId(name), { index: 'keys' }).nth(0).run()) as { events: { trace?: string; record: Data }[] }
    const [first, second] = [await logged('traced one'), await logged('traced two')]
    expect(first.events.map((event) => event.record)).toEqual([one])
    expect(second.events.map((event) => event.record)).toEqual([two])
    expect(first.events[0]!.trace).toMatch(/^00-0{31}\d-/)
    expect(second.events[0]!.trace).toMatch(/^00-0{31}\d-/)
    expect(second.events[0]!.trace).not.toBe(first.events[0]!.trace)
    expect(await store.keyedWrites.answer(keyed('traced two').idempotency as KeyedWrite)).toEqual({ result: [two] })
  })

  it('groups keyed creates with unkeyed ones in one insert, each keyed once, a failed one keeping no key', async () => {
    const store = await open()
    const log = server!.r.db(server!.db).table('plumage_events')
    // A key whose row was lost (soft claim, server crash) while its log row stays: made again from it in the batch.
    const [lost] = await store.create([{ text: 'lost' }], {}, keyed('group lost'))
    await keys().get(rowId('group lost')).delete().run()
    await store.create([{ id: 'taken', text: 'taken' }], {})
    // While this one is in flight, the others queue and go out together as the next query.
    const first = store.create([{ text: 'first' }], {})
    const calls = [
      store.create([{ text: 'plain a' }], {}),
      store.create([{ text: 'a' }, { text: 'a2' }], {}, keyed('group a')),
      store.create([{ text: 'twin' }], {}, keyed('group twin')),
      store.create([{ text: 'twin' }], {}, keyed('group twin')),
      store.create([{ id: 'taken', text: 'again' }], {}, keyed('group taken')),
      store.create([{ text: 'lost' }], {}, keyed('group lost')),
      store.create([{ id: 'shared', text: 'plain' }], {}),
      store.create([{ id: 'shared', text: 'keyed' }], {}, keyed('group shared')),
      store.create([{ text: 'b' }], {}, keyed('group b'))
    ]
    const settled = await Promise.allSettled([first, ...calls])
    const [, plain, a, twin1, twin2, taken, lostAgain, shared, sharedKeyed, b] = settled.map((outcome) =>
      outcome.status === 'fulfilled' ? (outcome.value as Data[]) : outcome.reason
    )
    expect(plain).toHaveLength(1)
    expect((a as Data[]).map((record) => record.text)).toEqual(['a', 'a2'])
    expect(twin2).toEqual(twin1)
    expect(taken).toBeInstanceOf(Conflict)
    expect(lostAgain).toEqual([lost])
    expect(shared).toEqual([{ id: 'shared', text: 'plain' }])
    expect(sharedKeyed).toBeInstanceOf(Conflict)
    expect(b).toHaveLength(1)
    const records = await store.find(ALL)
    // taken, lost, first, plain a, a, a2, twin, shared, b: the failed ones wrote nothing (or undid it).
    expect(records.map((record) => record.text).sort()).toEqual(
      ['a', 'a2', 'b', 'first', 'lost', 'plain', 'plain a', 'taken', 'twin'].sort()
    )
    // One log row carried several keys: the keyed creates were grouped.
    const rows = (await log
      .filter((row: RDatum) => row('events')(0)('table').eq(store.tableName).and(row.hasFields('keys')))
      .run()) as { keys: string[] }[]
    expect(Math.max(...rows.map((row) => row.keys.length))).toBeGreaterThan(1)
    expect(rows.flatMap((row) => row.keys)).not.toContain(rowId('group taken'))
    // The failed creates kept no key: a repeat of one tries again (and is refused again, the id being taken).
    expect(await keys().get(rowId('group taken')).run()).toBeNull()
    expect(await keys().get(rowId('group shared')).run()).toBeNull()
    // The log row is the keys' commit: their rows get the answers from it when first asked (or before it is pruned).
    expect(await keys().get(rowId('group a')).run()).not.toHaveProperty('answer')
    const answer = (name: string) => store.keyedWrites.answer(keyed(name).idempotency as KeyedWrite)
    expect(await answer('group a')).toEqual({ result: a })
    expect(await answer('group twin')).toEqual({ result: twin1 })
    expect((await keys().get(rowId('group a')).run())?.answer).toEqual(a)
    // Repeats answer what was written, without writing.
    expect(await store.create([{ text: 'a' }, { text: 'a2' }], {}, keyed('group a'))).toEqual(a)
    expect(await store.create([{ text: 'b' }], {}, keyed('group b'))).toEqual(b)
    expect(await store.find(ALL)).toHaveLength(records.length)
  })
})
