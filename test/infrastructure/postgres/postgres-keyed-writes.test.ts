import { afterAll, describe, expect, it } from '@jest/globals'
import pg from 'pg'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { KEYS_TABLE } from '../../../src/infrastructure/postgres/postgres-keyed-writes.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { keyRowId } from '../../../src/infrastructure/store-commons/keyed-writes/index.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import { makeKeyedWrite } from '../../../src/testing/index.js'
import { discoverPostgres } from '../../support/postgres-server.js'

// What only PostgreSQL shows of idempotency keys: a key whose first request is still in its transaction (here held
// open by hand) makes a repeat wait, then answers 409 after the write's waitMs; once it commits, repeats replay.
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip
const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const close of closers) await close()
  await database?.stop()
})
const ALL = parseQuery({})

withServer('PostgreSQL idempotency keys', () => {
  it('answers 409 to a repeat while the first request of its key is still in its transaction', async () => {
    const factory = new PostgresStoreFactory(new PostgresDatabase({ url: database!.url }), { watch: false })
    closers.push(() => factory.close())
    const store = factory.create('inflight')
    await store.setup!()
    await store.create([{ id: 'r', n: 0 }], {})
    const first = makeKeyedWrite('alice inflight patch held', 'print')
    const holder = new pg.Client({ connectionString: database!.url })
    await holder.connect()
    closers.push(() => holder.end())
    await holder.query('BEGIN')
    await holder.query(
      `INSERT INTO ${KEYS_TABLE} (id, fingerprint, answer, expires_at) VALUES ($1, 'print', '[]', now() + interval '1 hour')`,
      [keyRowId(first)]
    )
    const repeat = { ...makeKeyedWrite('alice inflight patch held', 'print'), waitMs: 300 }
    const started = Date.now()
    await expect(store.patch('r', { n: 1 }, ALL, { idempotency: repeat })).rejects.toMatchObject({ code: 409 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    expect(await store.get('r', ALL)).toEqual({ id: 'r', n: 0 })
    await holder.query('COMMIT')
    // Committed with the answer [] (what the holder wrote): the repeat now replays it and writes nothing.
    const after = makeKeyedWrite('alice inflight patch held', 'print')
    expect(await store.patch('r', { n: 1 }, ALL, { idempotency: after })).toEqual([])
    expect(after.replayed).toBe(true)
    expect(await store.get('r', ALL)).toEqual({ id: 'r', n: 0 })
  })
})
