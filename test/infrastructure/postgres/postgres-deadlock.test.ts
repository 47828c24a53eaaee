import { afterAll, describe, expect, it } from '@jest/globals'
import pg from 'pg'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { discoverPostgres } from '../../support/postgres-server.js'

// A real deadlock (as an instance's schema setup makes with live writes: it locks the log, then the tables): PostgreSQL
// rolls the write back to break it, and the store runs the write again instead of answering 500. Written once, logged
// once.
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip
if (!database) process.stderr.write('SKIPPED: PostgreSQL deadlock retry (no PostgreSQL server and no binaries)\n')
const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const close of closers) await close()
  await database?.stop()
})
const ALL = parseQuery({})

withServer('a write PostgreSQL rolls back to break a deadlock', () => {
  it('runs again and is written and logged once', async () => {
    const factory = new PostgresStoreFactory(new PostgresDatabase({ url: database!.url }))
    closers.push(() => factory.close())
    const store = factory.create('deadlocked')
    await store.setup!()
    await store.create([{ id: 'r', n: 0 }], {})
    const holder = new pg.Client({ connectionString: database!.url })
    await holder.connect()
    closers.push(() => holder.end())
    // The holder takes the log first; the write takes its table, then waits for the log in its trigger.
    await holder.query('BEGIN')
    await holder.query('LOCK TABLE plumage_events IN SHARE MODE')
    const patched = store.patch('r', { n: 1 }, ALL)
    const waiting = async () => {
      const { rows } = await holder.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'plumage_events'::regclass"
      )
      return rows[0]!.n > 0
    }
    while (!(await waiting())) await new Promise((resolve) => setTimeout(resolve, 10))
    // Now the holder wants the write's table: a cycle. The write waited first, so its backend finds the cycle first
    // (after deadlock_timeout, 1 s) and is rolled back; the holder gets its lock and commits.
    await holder.query('LOCK TABLE deadlocked IN SHARE ROW EXCLUSIVE MODE')
    await holder.query('COMMIT')
    await expect(patched).resolves.toEqual([{ id: 'r', n: 1 }])
    expect(await store.get('r', ALL)).toEqual({ id: 'r', n: 1 })
    const { rows } = await holder.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM plumage_events WHERE service = 'deadlocked' AND event = 'patched'"
    )
    expect(rows[0]!.n).toBe(1)
  })
})
