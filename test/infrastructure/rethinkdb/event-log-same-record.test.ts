import { afterAll, describe, expect, it } from '@jest/globals'
import { randomBytes } from 'node:crypto'
import { silentLogger } from '../../../src/domain/logger.js'
import type { Data } from '../../../src/domain/service/service.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import { EventLog, type LoggedEvent } from '../../../src/infrastructure/rethinkdb/event-log.js'
import { RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

/*
 * Two concurrent writes of one record, through two instances: does the log number them in the order the table took
 * them? The write and its log row are one query, but the number is taken after the write (ADR 0019, still open):
 * when the two interleave, every instance ends on the older value. A fix could log the record as the table holds it
 * when the number is taken (the last number then carries the last value), or take the number with the write.
 */
// A known bug, reproduced here for whoever fixes it (9 of 150 rounds ended on the older value on 2026-12-07): it
// runs with RETHINKDB_KNOWN_BUGS=1, and is skipped otherwise so that the suite stays green until the fix.
const known = process.env.RETHINKDB_KNOWN_BUGS === '1'
const server = known ? await discoverRethinkDb() : null
const withServer = server ? describe : describe.skip
if (!known) process.stderr.write('SKIPPED: concurrent writes of one record on RethinkDB (RETHINKDB_KNOWN_BUGS=1)\n')

afterAll(async () => {
  await server?.stop()
})

withServer('concurrent writes of one record', () => {
  it('end, in the log, on the value the table holds', async () => {
    const logTable = `events_${randomBytes(4).toString('hex')}`
    const table = `items_${randomBytes(4).toString('hex')}`
    const instance = async () => {
      const log = new EventLog({ r: server!.r, db: server!.db, logger: silentLogger, table: logTable })
      const store = new RethinkDbStore({ r: server!.r, db: server!.db, table, events: log, directWrites: false })
      await store.init()
      const seen: LoggedEvent[] = []
      const stop = log.subscribe(table, (event) => seen.push(event))
      await log.whenLive()
      return { log, store, seen, stop }
    }
    const a = await instance()
    const b = await instance()
    const [record] = (await a.store.create([{ n: 0 }], parseQuery({}))) as Data[]
    const id = record!.id as string
    let wrong = 0
    for (let round = 1; round <= 150; round++) {
      await Promise.all([
        a.store.patch(id, { n: 2 * round }, parseQuery({})),
        b.store.patch(id, { n: 2 * round + 1 }, parseQuery({}))
      ])
      while (a.seen.length < 1 + 2 * round) await new Promise((resolve) => setTimeout(resolve, 5))
      const stored = ((await a.store.get(id, parseQuery({}))) as Data).n
      if ((a.seen.at(-1)!.record as Data).n !== stored) wrong++
    }
    a.stop()
    b.stop()
    await Promise.all([a.log.stop(), b.log.stop()])
    expect(wrong).toBe(0)
  }, 120_000)
})
