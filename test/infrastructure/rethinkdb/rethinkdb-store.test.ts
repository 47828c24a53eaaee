import { randomBytes } from 'node:crypto'
import { r } from 'rethinkdb-ts'
import { BadRequest, Conflict } from '../../../src/domain/errors/errors.js'
import type { StoreQuery } from '../../../src/domain/query/ast.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { Data } from '../../../src/domain/service/service.js'
import type { StoreChange } from '../../../src/domain/store/store.js'
import { RethinkDbStore, type RethinkDbStoreOptions } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { peopleSchema } from '../../support/people-schema.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

// Integration suites: they need a real RethinkDB (RETHINKDB_URL, or Docker for a throw-away
// container). Without one they are skipped and the run prints one loud line saying so.
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

const tableName = (purpose: string): string => `${purpose}_${randomBytes(4).toString('hex')}`
const q = (raw: Record<string, unknown> = {}): StoreQuery => parseQuery(raw, { operators: ['$search', '$contains'] })

/** A store over a fresh table of the run's database, created through init(). */
async function freshStore(
  options: Omit<RethinkDbStoreOptions, 'r' | 'db' | 'table'> & { table?: string } = {}
): Promise<RethinkDbStore> {
  if (!server) throw new Error('no server')
  const store = new RethinkDbStore({
    r: server.r,
    db: server.db,
    table: options.table ?? tableName('items'),
    ...options
  })
  await store.init()
  return store
}

/** Collects a store's change events; `next` awaits the first not yet taken event that matches. */
function recorder(store: RethinkDbStore) {
  const events: StoreChange<Data>[] = []
  const waiters: { match(change: StoreChange<Data>): boolean; resolve(change: StoreChange<Data>): void }[] = []
  const taken = new Set<StoreChange<Data>>()
  const stop = store.watch!((change) => {
    events.push(change)
    const index = waiters.findIndex((waiter) => waiter.match(change))
    if (index >= 0) {
      taken.add(change)
      waiters.splice(index, 1)[0]!.resolve(change)
    }
  })
  const next = (match: (change: StoreChange<Data>) => boolean): Promise<StoreChange<Data>> => {
    const seen = events.find((change) => !taken.has(change) && match(change))
    if (seen) {
      taken.add(seen)
      return Promise.resolve(seen)
    }
    return new Promise((resolve) => waiters.push({ match, resolve }))
  }
  return { events, next, stop }
}

const about =
  (event: StoreChange['event'], name: string) =>
  (change: StoreChange<Data>): boolean =>
    change.event === event && change.record.name === name

afterAll(async () => {
  await server?.stop()
})

// Construction needs no connection: these run everywhere (and keep the skip line of this file visible).
describe('RethinkDbStore options', () => {
  it('offers watch only when watching (the default)', () => {
    expect(new RethinkDbStore({ r, table: 'unused' }).watch).toBeInstanceOf(Function)
    expect(new RethinkDbStore({ r, table: 'unused', watch: false }).watch).toBeUndefined()
  })

  it('uses the id field it is given and declares $search and $contains', () => {
    const store = new RethinkDbStore({ r, table: 'unused', id: 'key' })
    expect(store.id).toBe('key')
    expect(store.operators).toEqual(['$search', '$contains'])
  })

  it("sends the hand-written ReQL for reads of fields whose types the records' schema declares", () => {
    const store = new RethinkDbStore({ r, table: 'people', db: 'bench', schema: peopleSchema })
    const table = store.table()
    expect(store.findQuery(q({ city: 'Berlin', $limit: 50 })).toString()).toBe(
      table.filter({ city: 'Berlin' }).limit(50).toString()
    )
    expect(
      store
        .findQuery(
          q({ city: { $in: ['Rome', 'Oslo'] }, age: { $gte: 30 }, $sort: { age: -1, name: 1, id: 1 }, $limit: 10 })
        )
        .toString()
    ).toBe(
      table
        .filter((row) => r.expr(['Rome', 'Oslo']).contains(row('city')).and(row('age').ge(30)))
        .orderBy(r.desc('age'), r.asc('name'), r.asc('id'))
        .limit(10)
        .toString()
    )
    expect(store.findQuery(q({ city: 'Paris', $sort: { score: 1, id: 1 }, $limit: 25 })).toString()).toBe(
      table.filter({ city: 'Paris' }).orderBy(r.asc('score'), r.asc('id')).limit(25).toString()
    )
  })

  it('builds createQuery on the table of its database', () => {
    const store = new RethinkDbStore({ r, table: 'items', db: 'plumage' })
    expect(store.createQuery(q()).toString()).toBe('r.db("plumage").table("items")')
    expect(store.createQuery(q({ age: 3 })).toString()).toBe('r.db("plumage").table("items").filter({ age: 3 })')
    expect(store.createQuery(q({ age: { $ne: 3 } })).toString()).toBe(
      'r.db("plumage").table("items").filter((var_1) => var_1("age").default(null).ne(3))'
    )
  })
})

withServer('RethinkDbStore against a real server', () => {
  // The Store contract, the live members' included, runs on this adapter from the kit: rethinkdb.contract.test.ts.
  describe('init', () => {
    it('is idempotent', async () => {
      const store = await freshStore()
      await expect(store.init()).resolves.toBeUndefined()
      await store.create([{ name: 'after second init' }], q())
      expect(await store.count(q().filter)).toBe(1)
    })

    it('lets eight stores race to create the same table and leaves exactly one (processes starting together)', async () => {
      const table = tableName('race')
      const stores = Array.from(
        { length: 8 },
        () => new RethinkDbStore({ r: server!.r, db: server!.db, table, indexes: [{ name: 'name', fields: ['name'] }] })
      )
      await Promise.all(stores.map((store) => store.init()))
      expect(
        await server!.r.db('rethinkdb').table('table_config').filter({ db: server!.db, name: table }).count().run()
      ).toBe(1)
      expect(await stores[0]!.table().indexList().run()).toEqual(['name'])
      await stores[0]!.create([{ name: 'one' }], q())
      expect(names(await stores[7]!.find(q()))).toEqual(['one'])
    })

    it('creates indexes on nested fields and waits for them', async () => {
      const store = new RethinkDbStore({
        r: server!.r,
        db: server!.db,
        table: tableName('indexed'),
        indexes: [{ name: 'city', fields: ['address.city'] }]
      })
      await store.init()
      await store.create([{ address: { city: 'Oslo' } }, { address: { city: 'Lima' } }], q())
      expect(await store.table().getAll('Lima', { index: 'city' }).count().run()).toBe(1)
    })

    it('creates a missing database as well', async () => {
      const db = `${server!.db}_extra`
      const store = new RethinkDbStore({ r: server!.r, db, table: 'items' })
      try {
        await store.init()
        await store.create([{ name: 'in another db' }], q())
        expect(await store.count(q().filter)).toBe(1)
      } finally {
        await server!.r.dbDrop(db).run()
      }
    })

    it('refuses a table whose primary key is not the id field', async () => {
      const table = tableName('keyed')
      await freshStore({ table, id: 'id' })
      await expect(new RethinkDbStore({ r: server!.r, db: server!.db, table, id: 'uuid' }).init()).rejects.toThrow(
        "has primary key 'id'"
      )
    })
  })

  describe('createQuery and params.rethinkdb', () => {
    let store: RethinkDbStore
    beforeAll(async () => {
      store = await freshStore({ watch: false })
      await store.create(
        [
          { name: 'Alice', age: 19, team: 'red' },
          { name: 'Bob', age: 25, team: 'blue' },
          { name: 'Cleo', age: 31, team: 'red' },
          { name: 'Doug', age: 32, team: 'blue' }
        ],
        q()
      )
    })

    it('returns the table filtered by the query, without sort or pagination', async () => {
      const rows = (await store.createQuery(q({ team: 'red', $limit: 1, $sort: { name: -1 } })).run()) as Data[]
      expect(names(rows).sort()).toEqual(['Alice', 'Cleo'])
    })

    it('replaces the base query of find, with filter, sort, skip, limit and select applied on top', async () => {
      const params = { rethinkdb: store.createQuery(q({ age: { $gt: 20 } })) }
      expect(names(await store.find(q({ $sort: { name: 1 } }), params))).toEqual(['Bob', 'Cleo', 'Doug'])
      expect(names(await store.find(q({ team: 'blue', $sort: { name: -1 } }), params))).toEqual(['Doug', 'Bob'])
      expect(await store.find(q({ $sort: { age: 1 }, $skip: 1, $limit: 1, $select: ['age'] }), params)).toEqual([
        { id: expect.any(String), age: 31 }
      ])
    })

    it('replaces the base query of page and count', async () => {
      const params = { rethinkdb: store.createQuery(q({ team: 'red' })) }
      expect(await store.count(q().filter, params)).toBe(2)
      const page = await store.page(q({ $sort: { name: 1 }, $limit: 1 }), params)
      expect(page.total).toBe(2)
      expect(names(page.data)).toEqual(['Alice'])
    })

    it('accepts any ReQL sequence a hook builds, e.g. with its own ordering', async () => {
      const params = { rethinkdb: store.table().orderBy(server!.r.desc('age')) }
      expect(names(await store.find(q({ $limit: 2 }), params))).toEqual(['Doug', 'Cleo'])
    })

    it('refuses a params.rethinkdb that is not a query', async () => {
      await expect(store.find(q(), { rethinkdb: { team: 'red' } })).rejects.toThrow(
        'params.rethinkdb must be a ReQL sequence'
      )
    })
  })

  describe('sort ties', () => {
    it('orders records that tie on the sort keys by id, ascending, through an index read either way and a scan', async () => {
      // The live queries' oracle found a descending index read giving ties in descending key order.
      const store = await freshStore({
        watch: false,
        schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
        indexes: [{ name: 'n', fields: ['n'] }]
      })
      const ids = ['k3', 'a7', 'm1', 'b2', 'z0', 'c9']
      await store.create(
        ids.map((id, i) => ({ id, n: i % 2, tag: 't' })),
        q()
      )
      const order = async (raw: Record<string, unknown>) => (await store.find(q(raw))).map((record) => record.id)
      expect(await order({ $sort: { n: -1 }, $limit: 4 })).toEqual(['a7', 'b2', 'c9', 'k3'])
      expect(await order({ $sort: { n: 1 }, $limit: 4 })).toEqual(['k3', 'm1', 'z0', 'a7'])
      expect(await order({ tag: 't', $sort: { n: -1 } })).toEqual(['a7', 'b2', 'c9', 'k3', 'm1', 'z0'])
      expect(await order({ $sort: { tag: 1 }, $skip: 2, $limit: 3 })).toEqual(['c9', 'k3', 'm1'])
    })
  })

  describe('errors', () => {
    it('answers Conflict to a duplicate id and keeps nothing of that insert', async () => {
      const store = await freshStore({ watch: false })
      await store.create([{ id: 'taken', name: 'first' }], q())
      await expect(
        store.create(
          [
            { id: 'new', name: 'ok' },
            { id: 'taken', name: 'again' }
          ],
          q()
        )
      ).rejects.toBeInstanceOf(Conflict)
      expect(names(await store.find(q({ $sort: { name: 1 } })))).toEqual(['first'])
    })

    it('answers BadRequest to an invalid $search pattern', async () => {
      const store = await freshStore({ watch: false })
      await store.create([{ name: 'x' }], q())
      await expect(store.find(q({ name: { $search: '(' } }))).rejects.toBeInstanceOf(BadRequest)
    })

    it('generates uuid ids under a custom id field', async () => {
      const store = await freshStore({ id: 'key', watch: false })
      const [record] = await store.create([{ name: 'generated' }], q())
      expect(record).toEqual({ key: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'generated' })
      expect(record).not.toHaveProperty('id')
    })
  })

  describe('change feed', () => {
    it('publishes created, patched and removed for writes made directly in the database', async () => {
      const store = await freshStore()
      const events = recorder(store)
      await store.whenWatching()
      const table = store.table()
      await table.insert({ id: 'direct', name: 'Direct' }).run()
      expect(await events.next(about('created', 'Direct'))).toEqual({
        event: 'created',
        record: { id: 'direct', name: 'Direct' }
      })
      await table.get('direct').update({ age: 3 }).run()
      expect((await events.next((change) => change.event === 'patched')).record).toEqual({
        id: 'direct',
        name: 'Direct',
        age: 3
      })
      await table.get('direct').delete().run()
      expect((await events.next((change) => change.event === 'removed')).record).toEqual({
        id: 'direct',
        name: 'Direct',
        age: 3
      })
      events.stop()
      await store.close()
    })
  })
})

function names(records: Data[]): string[] {
  return records.map((record) => String(record.name))
}
