import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import pg from 'pg'
import type { StoreQuery } from '../../../src/domain/query/ast.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { Store, StoreChange } from '../../../src/domain/store/store.js'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { discoverPostgres } from '../../support/postgres-server.js'

// The event log on a real PostgreSQL server of this file's own (it is restarted): two factories are
// two instances of the app on one database.
const database = await discoverPostgres({ ownServer: true })
const withServer = database ? describe : describe.skip

afterAll(async () => {
  await database?.stop()
})

const q = (raw: Record<string, unknown> = {}): StoreQuery => parseQuery(raw, { operators: ['$search', '$contains'] })

/** Every change a store publishes, and a way to await the first one not yet taken that matches. */
function recorder(store: Store) {
  const events: StoreChange[] = []
  const waiters: { match(change: StoreChange): boolean; resolve(): void }[] = []
  store.watch!((change) => {
    events.push(change)
    for (const waiter of [...waiters])
      if (waiter.match(change)) waiters.splice(waiters.indexOf(waiter), 1)[0]!.resolve()
  })
  const seen = (match: (change: StoreChange) => boolean): Promise<void> =>
    events.some(match) ? Promise.resolve() : new Promise((resolve) => waiters.push({ match, resolve }))
  const names = () => events.map((change) => `${change.event} ${String(change.record.name)}`)
  return { events, seen, names }
}

const about = (event: string, name: string) => (change: StoreChange) =>
  change.event === event && change.record.name === name

withServer('the PostgreSQL event log', () => {
  const factories: PostgresStoreFactory[] = []
  let a: Store, b: Store
  let onA: ReturnType<typeof recorder>, onB: ReturnType<typeof recorder>

  const instance = async (): Promise<Store> => {
    const factory = new PostgresStoreFactory(new PostgresDatabase({ url: database!.url, timeoutMs: 5000 }), {
      timeoutMs: 60_000
    })
    factories.push(factory)
    const store = factory.create('messages')
    await store.setup!()
    return store
  }

  beforeAll(async () => {
    ;[a, b] = await Promise.all([instance(), instance()])
    onA = recorder(a)
    onB = recorder(b)
    await Promise.all([a.whenWatching!(), b.whenWatching!()])
  })
  afterAll(async () => {
    for (const factory of factories) await factory.close()
  })

  it("publishes every write once on every instance, under the method's event name", async () => {
    const [ann] = await a.create([{ name: 'ann' }], q())
    await b.update(ann!.id as string, { name: 'ann2' }, q())
    await a.patch(ann!.id as string, { name: 'ann3' }, q())
    await b.remove(ann!.id as string, q())
    for (const on of [onA, onB]) await on.seen(about('removed', 'ann3'))
    expect(onA.names()).toEqual(['created ann', 'updated ann2', 'patched ann3', 'removed ann3'])
    expect(onB.names()).toEqual(onA.names())
  })

  it('gives both instances the same order of concurrent writes, each once', async () => {
    const before = onA.events.length
    await Promise.all(Array.from({ length: 60 }, (_, n) => (n % 2 ? a : b).create([{ name: `c${n}`, n }], q())))
    await a.patch(null, { seen: true }, q({ n: { $gte: 0 } }))
    for (const on of [onA, onB]) await on.seen((change) => change.event === 'patched' && change.record.name === 'c59')
    const created = onA
      .names()
      .slice(before)
      .filter((name) => name.startsWith('created'))
    expect(new Set(created).size).toBe(60)
    expect(onB.names()).toEqual(onA.names())
  })

  it('hands out every event of a transaction, in order, when their numbers gain a digit', async () => {
    const admin = new pg.Client({ connectionString: database!.url })
    await admin.connect()
    // The next events are numbered 95, 96, …, 104: as text, '100' comes before '95'.
    await admin.query('ALTER TABLE plumage_events ALTER COLUMN id RESTART WITH 95').finally(() => admin.end())
    const records = Array.from({ length: 10 }, (_, n) => ({ name: `digit${n}` }))
    await a.create(records, q())
    for (const on of [onA, onB]) await on.seen(about('created', 'digit9'))
    expect(onA.names().slice(-10)).toEqual(records.map(({ name }) => `created ${name}`))
    expect(onB.names()).toEqual(onA.names())
  })

  it('publishes writes made directly in the database, and a custom event, on both instances', async () => {
    const client = new pg.Client({ connectionString: database!.url })
    await client.connect()
    await client.query(`INSERT INTO messages (key, doc) VALUES ('sql1', '{"id": "sql1", "name": "direct"}')`)
    await client.query(`UPDATE messages SET doc = doc || '{"name": "direct2"}' WHERE key = 'sql1'`)
    await client.query(`DELETE FROM messages WHERE key = 'sql1'`)
    await client.end()
    await a.publish!('archived', { name: 'custom' })
    for (const on of [onA, onB]) await on.seen(about('archived', 'custom'))
    expect(onA.names().slice(-4)).toEqual(['created direct', 'patched direct2', 'removed direct2', 'archived custom'])
    expect(onB.names()).toEqual(onA.names())
  })

  it('rolls back a write and its events together', async () => {
    await expect(
      a.create(
        [
          { id: 'dup', name: 'once' },
          { id: 'dup', name: 'twice' }
        ],
        q()
      )
    ).rejects.toThrow(/already exists/)
    await a.publish!('marker', { name: 'after rollback' })
    for (const on of [onA, onB]) await on.seen(about('marker', 'after rollback'))
    expect(onA.names().filter((name) => name.includes('once') || name.includes('twice'))).toEqual([])
  })

  it('follows again after losing its connection while events wait for an older transaction', async () => {
    const admin = new pg.Client({ connectionString: database!.url })
    await admin.connect()
    const older = new pg.Client({ connectionString: database!.url })
    await older.connect()
    try {
      // An open transaction that wrote: newer events wait for it, and the followers read again every few ms.
      await older.query('BEGIN')
      await older.query(`INSERT INTO messages (key, doc) VALUES ('older', '{"id": "older", "name": "older"}')`)
      await a.create([{ name: 'newer' }], q())
      // Both followers' connections (LISTEN, then their reads) are cut, mid-read or between reads.
      for (let cut = 0; cut < 5; cut++) {
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE pid <> pg_backend_pid() AND (query LIKE 'LISTEN%' OR query LIKE '%FROM plumage_events%')`
        )
        await new Promise((resolve) => setTimeout(resolve, 30))
      }
      await older.query('COMMIT')
      for (const on of [onA, onB]) await on.seen(about('created', 'newer'))
      expect(onA.names().slice(-2)).toEqual(['created older', 'created newer'])
      expect(onB.names()).toEqual(onA.names())
    } finally {
      await older.end()
      await admin.end()
    }
  })

  it('misses nothing and repeats nothing across a restart of the database', async () => {
    const before = onA.events.length
    await database!.server!.halt()
    await database!.server!.start()
    // The pools find the server again; the followers resume from the last event they handed out.
    let created = false
    for (let attempt = 0; !created && attempt < 100; attempt++) {
      created = await a.create([{ name: 'after restart' }], q()).then(
        () => true,
        () => new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 100))
      )
    }
    await b.create([{ name: 'from b' }], q())
    for (const on of [onA, onB]) {
      await on.seen(about('created', 'after restart'))
      await on.seen(about('created', 'from b'))
    }
    expect(onA.names().slice(before)).toEqual(['created after restart', 'created from b'])
    expect(onB.names()).toEqual(onA.names())
  })
  it('reads the log at once for a place another instance handed out, without waiting for a notification', async () => {
    // A row no one notifies about (a lost wake-up): B finds it because it was asked for its place, not at its poll.
    const client = new pg.Client({ connectionString: database!.url })
    await client.connect()
    const { rows } = await client.query<{ tx: string; id: string }>(
      `INSERT INTO plumage_events (service, event, record) VALUES ('messages', 'created', '{"id":"silent","name":"silent"}')
       RETURNING tx::text AS tx, id::text AS id`
    )
    await client.end()
    const log = factories[1]!.eventLog()!
    expect(await log.whenAt({ tx: BigInt(rows[0]!.tx), id: BigInt(rows[0]!.id) }, 1000)).toBe(true)
    await onB.seen(about('created', 'silent'))
  })
})
