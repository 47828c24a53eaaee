import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import pg from 'pg'
import { BadRequest, Conflict } from '../../../src/domain/errors/errors.js'
import type { StoreQuery } from '../../../src/domain/query/ast.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { Data } from '../../../src/domain/service/service.js'
import type { Store, StoreChange } from '../../../src/domain/store/store.js'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { discoverPostgres } from '../../support/postgres-server.js'

// Group commit of the PostgreSQL store on a real server: the writes of a record that arrive while one
// is in flight share one transaction. Transactions are counted by the event log's rows, which carry
// their writing transaction's id.
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip

afterAll(async () => {
  await database?.stop()
})

const q = (raw: Record<string, unknown> = {}): StoreQuery => parseQuery(raw, { operators: ['$search'] })
const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'

interface LoggedEvent {
  tx: string
  event: string
  record: Data
  trace: string | null
}

withServer('PostgresStore group commit', () => {
  const factories: PostgresStoreFactory[] = []
  const admin = new pg.Pool({ connectionString: database?.url, max: 1 })
  // An idle connection ended by the server (the shutdown after the suite) is expected, not an uncaught 'error'.
  admin.on('error', () => undefined)
  /** The trace of the next write (read when the write is called, as the active span's). */
  let trace: string | undefined

  const open = async (table: string, maxBatch?: number): Promise<Store> => {
    const factory = new PostgresStoreFactory(new PostgresDatabase({ url: database!.url }), {
      traceparent: () => trace,
      ...(maxBatch !== undefined ? { maxBatch } : {})
    })
    factories.push(factory)
    const store = factory.create(table)
    await store.setup!()
    return store
  }

  /** The table's events as the log holds them, in its order (transaction, then row). */
  const logged = async (table: string): Promise<LoggedEvent[]> =>
    (
      await admin.query<LoggedEvent>(
        'SELECT tx::text AS tx, event, record, trace FROM plumage_events WHERE service = $1 ORDER BY tx, id',
        [table]
      )
    ).rows

  /** How many consecutive events each transaction wrote. */
  const perTransaction = (events: LoggedEvent[]): number[] => {
    const sizes: number[] = []
    events.forEach((event, index) => {
      if (index > 0 && events[index - 1]!.tx === event.tx) sizes[sizes.length - 1]!++
      else sizes.push(1)
    })
    return sizes
  }

  /** Resolves with the first `count` changes the store publishes from now on. */
  const changes = (store: Store, count: number): Promise<StoreChange[]> =>
    new Promise((resolve) => {
      const seen: StoreChange[] = []
      const stop = store.watch!((change) => {
        if (seen.push(change) === count) {
          stop()
          resolve(seen)
        }
      })
    })

  /**
   * The turn after the last write's answer: the table has no write in flight (a write answered sends
   * the writes queued meanwhile at the end of its turn, see GroupCommit).
   */
  const idle = () => new Promise((resolve) => setImmediate(resolve))

  const written = (record: Data | undefined) =>
    Object.keys(record ?? {})
      .filter((key) => key.startsWith('w'))
      .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)))

  beforeAll(() => {
    trace = undefined
  })
  afterAll(async () => {
    try {
      for (const factory of factories) await factory.close()
    } finally {
      await admin.end()
    }
  })

  it("sends a record's writes that arrive while one is in flight as one transaction, each caller its row", async () => {
    const store = await open('batched')
    await store.whenWatching!()
    const published = changes(store, 11)
    await store.create([{ id: 'one' }], q())
    await idle()
    // All ten in one turn: the first goes at once, the nine others while it is in flight.
    const results = await Promise.all(Array.from({ length: 10 }, (_, n) => store.patch('one', { [`w${n}`]: n }, q())))
    // Each caller's row is the record after its own write: the writes ran in the order they were called.
    expect(results.map(([record]) => written(record))).toEqual(
      Array.from({ length: 10 }, (_, n) => Array.from({ length: n + 1 }, (_, w) => `w${w}`))
    )
    const events = (await logged('batched')).filter((event) => event.event === 'patched')
    expect(perTransaction(events)).toEqual([1, 9])
    // The events come in the order the writes committed, each with the caller's row.
    expect((await published).slice(1).map((change) => change.record)).toEqual(results.map(([record]) => record))
    expect(events.map((event) => event.record)).toEqual(results.map(([record]) => record))
  })

  it('puts at most maxBatch writes in one transaction', async () => {
    const store = await open('capped', 3)
    await store.create([{ id: 'one' }], q())
    await idle()
    await Promise.all(Array.from({ length: 10 }, (_, n) => store.patch('one', { [`w${n}`]: n }, q())))
    expect(perTransaction((await logged('capped')).filter((event) => event.event === 'patched'))).toEqual([1, 3, 3, 3])
  })

  it('fails a failing write alone: the others of its batch get their own results and events, once', async () => {
    const store = await open('failing')
    await store.whenWatching!()
    const published = changes(store, 5)
    await store.create([{ id: 'k', n: 0 }], q())
    await idle()
    const outcomes = await Promise.allSettled([
      store.patch('k', { a: 1 }, q()),
      // These go together while the first is in flight.
      store.create([{ id: 'k', n: 2 }], q()),
      store.patch('k', { b: 2 }, q()),
      store.patch('k', { text: 'a\u0000b' }, q()),
      store.update('k', { c: 3 }, q()),
      store.remove('k', q())
    ])
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : outcome.reason))).toEqual([
      [{ id: 'k', n: 0, a: 1 }],
      expect.any(Conflict),
      [{ id: 'k', n: 0, a: 1, b: 2 }],
      expect.any(BadRequest),
      { id: 'k', c: 3 },
      [{ id: 'k', c: 3 }]
    ])
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({
      message: 'A record with this id already exists'
    })
    const expected = [
      ['patched', { id: 'k', n: 0, a: 1 }],
      ['patched', { id: 'k', n: 0, a: 1, b: 2 }],
      ['updated', { id: 'k', c: 3 }],
      ['removed', { id: 'k', c: 3 }]
    ]
    const events = (await logged('failing')).slice(1)
    expect(events.map(({ event, record }) => [event, record])).toEqual(expected)
    expect((await published).slice(1).map(({ event, record }) => [event, record])).toEqual(expected)
    // The batch was rolled back and its writes ran again, each in a transaction of its own.
    expect(perTransaction(events)).toEqual([1, 1, 1, 1])
  })

  it('keeps writes of different records apart: each its own statement, at once', async () => {
    const store = await open('apart')
    await store.create(
      Array.from({ length: 5 }, (_, n) => ({ id: `r${n}` })),
      q()
    )
    await idle()
    const results = await Promise.all(Array.from({ length: 5 }, (_, n) => store.patch(`r${n}`, { n }, q())))
    expect(results).toEqual(Array.from({ length: 5 }, (_, n) => [{ id: `r${n}`, n }]))
    expect(perTransaction((await logged('apart')).filter((event) => event.event === 'patched'))).toEqual([
      1, 1, 1, 1, 1
    ])
  })

  it("tells the triggers each write's own event name and trace, whatever the writes before it in the batch told", async () => {
    const store = await open('told')
    await store.create([{ id: 'one', v: 0 }], q())
    await idle()
    const first = store.patch('one', { v: 1 }, q())
    const update = store.update('one', { v: 2 }, q())
    trace = TRACE
    const traced = store.patch('one', { v: 3 }, q())
    trace = undefined
    const plain = store.patch('one', { v: 4 }, q())
    await Promise.all([first, update, traced, plain])
    const events = (await logged('told')).slice(1)
    expect(events.map(({ event, trace }) => [event, trace])).toEqual([
      ['patched', null],
      ['updated', null],
      ['patched', TRACE],
      ['patched', null]
    ])
    expect(perTransaction(events)).toEqual([1, 3])
  })

  it('survives the server ending a checked-out connection between two statements of its transaction', async () => {
    const db = new PostgresDatabase({ url: database!.url })
    const client = await db.checkout('things.patch')
    try {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      const ended = new Promise((resolve) =>
        (client as unknown as { on(event: 'end', listener: () => void): void }).on('end', () => resolve(undefined))
      )
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
      // The server's message arrives on a connection no query waits on: heard, not an uncaught 'error' event.
      await ended
      await expect(client.query('SELECT 1')).rejects.toThrow()
    } finally {
      client.release(true)
      await db.close()
    }
  })
})
