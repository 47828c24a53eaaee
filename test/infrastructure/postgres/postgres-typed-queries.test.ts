import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import pg, { type Client } from 'pg'
import type { StoreQuery } from '../../../src/domain/query/ast.js'
import { beyond } from '../../../src/domain/query/cursor.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import { shapesFromSchema } from '../../../src/domain/schema/field-shapes.js'
import type { JsonSchemaObject } from '../../../src/domain/schema/json-schema.js'
import type { Data } from '../../../src/domain/service/service.js'
import type { Store } from '../../../src/domain/store/store.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { peopleSchema } from '../../support/people-schema.js'
import { Parameters, SqlCompiler } from '../../../src/infrastructure/postgres/sql-compiler.js'
import { discoverPostgres } from '../../support/postgres-server.js'

// What a declared schema changes on PostgreSQL: the plans (a sort on a typed field is one key its
// expression index serves), never the answers (the contract's `indexes` group checks those) and never
// an error, even for a record that breaks the schema; and the bound on prepared statements.
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip

afterAll(async () => {
  await database?.stop()
})

const q = (raw: Record<string, unknown>): StoreQuery => parseQuery(raw, { operators: ['$search', '$contains'] })

/** The benches' people, with a field that may be null. */
const schema: JsonSchemaObject = {
  ...peopleSchema,
  properties: { ...peopleSchema.properties, nick: { type: ['string', 'null'] } }
}
const cities = ['Rome', 'Oslo', 'Paris', 'Lima']
const records: Data[] = Array.from({ length: 2000 }, (_, id) => ({
  id,
  name: `p${(id * 7919) % 2000}`,
  age: (id * 31) % 90,
  city: cities[id % 4],
  score: ((id * 13) % 1000) / 10,
  ...(id % 3 === 0 ? { nick: id % 2 ? null : `n${id % 17}` } : {})
}))

withServer('PostgreSQL queries on fields of declared types', () => {
  let factory: PostgresStoreFactory
  let store: Store
  let admin: Client
  const memory = new InMemoryStore()
  const compiler = new SqlCompiler(shapesFromSchema(schema, 'id'))

  beforeAll(async () => {
    factory = new PostgresStoreFactory(new PostgresDatabase({ url: database!.url }), { watch: false })
    store = factory.create('typed_people', {
      schema,
      indexes: [{ fields: ['age'] }, { fields: ['city', 'score'] }]
    })
    await store.setup!()
    await store.create(records, q({}))
    await memory.create(records, q({}))
    admin = new pg.Client({ connectionString: database!.url })
    await admin.connect()
    await admin.query('ANALYZE typed_people')
  })
  afterAll(async () => {
    await admin?.end()
    await factory?.close()
  })

  /** The plan of the find the store runs for `raw` (its SQL compiled as the store compiles it). */
  async function plan(raw: Record<string, unknown> | StoreQuery): Promise<string> {
    const query = 'filter' in raw ? (raw as StoreQuery) : q(raw)
    const params = new Parameters()
    const sql = `SELECT doc FROM typed_people WHERE ${compiler.where(query.filter, params)} ORDER BY ${compiler.orderBy(query.sort)} LIMIT ${query.limit}`
    const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params.values)
    return rows.map((row) => row['QUERY PLAN']).join('\n')
  }

  it('sorts a required number by its expression index, under an equality and under a range', async () => {
    const paged = await plan({ city: 'Paris', $sort: { score: 1 }, $limit: 25 })
    expect(paged).toContain('typed_people_city_score')
    expect(paged).toContain('Presorted Key')
    expect(paged).not.toContain('CASE')
    const ranged = await plan({ age: { $gte: 30 }, $sort: { age: -1, name: 1 }, $limit: 10 })
    expect(ranged).toMatch(/Index Scan Backward using typed_people_age/)
    expect(ranged).not.toContain('jsonb_typeof')
  })

  it('reads a descending cursor page from the position through the index when the key is never null', async () => {
    // The records after (age 40, id 500) newest first: "age at most 40, or null" is the range age <= 40.
    const query = q({ $sort: { age: -1, id: -1 }, $limit: 26 })
    const paged = { ...query, filter: beyond([40, 500], query.sort, true, 'id') }
    const read = await plan(paged)
    expect(read).toMatch(/Index Scan Backward using typed_people_age/)
    expect(read).toMatch(/Index Cond: \(\(doc -> 'age'::text\) <= '40'::jsonb\)/)
    expect(read).not.toContain('IS NULL')
    expect(await store.find(paged)).toEqual(await memory.find(paged))
    // A key that may be null keeps its null test, and the records holding null.
    const nullable = q({ $sort: { nick: -1, id: -1 }, $limit: 40 })
    const after = { ...nullable, filter: beyond(['n5', 600], nullable.sort, true, 'id') }
    expect(await plan(after)).toContain('IS NULL')
    expect(await store.find(after)).toEqual(await memory.find(after))
  })

  it('keeps the kind-ranked sort and the type guards where the schema does not settle the kind', async () => {
    expect(await plan({ $sort: { id: 1, color: 1 }, $limit: 5 })).toContain('CASE jsonb_typeof')
    // A string bound on a number field: the guarded comparison, which matches no number.
    expect(await plan({ age: { $gte: '30' }, $sort: { age: 1 }, $limit: 5 })).toContain('jsonb_typeof')
  })

  // Every sort ends on a unique field: ties are ordered by key here, by insertion in memory.
  it('answers what the memory store answers, nullable fields and bounds of another type included', async () => {
    for (const raw of [
      { city: { $in: ['Rome', 'Oslo'] }, age: { $gte: 30 }, $sort: { age: -1, name: 1 }, $limit: 10 },
      { city: 'Paris', $sort: { score: -1, name: 1 }, $skip: 3, $limit: 7 },
      { age: { $lt: 5 }, $sort: { nick: 1, id: 1 }, $limit: 20 },
      { $sort: { nick: -1, score: 1, name: 1 }, $limit: 20 },
      { age: { $gte: '30' } },
      { name: { $lt: 'p2' }, nick: { $gt: 'n1' }, $sort: { name: 1 }, $limit: 20 }
    ]) {
      expect(await store.find(q(raw))).toEqual(await memory.find(q(raw)))
    }
  })

  it('never fails on a record that breaks the schema (written around the service)', async () => {
    await admin.query(
      `INSERT INTO typed_people (key, doc) VALUES ('bad', '{"id": "bad", "name": 5, "age": "old", "city": null, "score": [1], "nick": 3}')`
    )
    try {
      for (const raw of [
        { $sort: { age: 1, name: -1, score: 1, nick: 1 }, $limit: 5 },
        { age: { $gte: 30 }, score: { $lt: 50 }, name: { $gt: 'a' }, $sort: { score: -1 }, $limit: 5 }
      ]) {
        await expect(store.find(q(raw))).resolves.toHaveLength(5)
      }
    } finally {
      await admin.query(`DELETE FROM typed_people WHERE key = 'bad'`)
    }
  })
})

withServer('PostgreSQL prepared statements', () => {
  it('prepares at most 200 statements per connection, and answers past that bound', async () => {
    const db = new PostgresDatabase({ url: database!.url, poolSize: 1 })
    const factory = new PostgresStoreFactory(db, { watch: false })
    try {
      const store = factory.create('prepared_people')
      await store.setup!()
      await store.create([{ id: 1, a: 3 }], q({}))
      // Each filter of another shape is another statement text; a get by id is prepared.
      for (let size = 1; size <= 250; size++) {
        const filter = { $or: Array.from({ length: size }, (_, n) => ({ a: n })) }
        expect(await store.get(1, q(filter))).toEqual(size > 3 ? { id: 1, a: 3 } : null)
      }
      const { rows } = await db.query<{ count: string }>('count', 'SELECT count(*) FROM pg_prepared_statements')
      expect(Number(rows[0]!.count)).toBe(200)
    } finally {
      await factory.close()
    }
  })
})

// The texts of gets and writes are compiled once per shape and reused with each call's values: a second call of one
// shape must read its own id and values, never the first call's.
withServer('PostgreSQL gets and writes of one shape', () => {
  it('run with each call’s own id and values, as in memory', async () => {
    const factory = new PostgresStoreFactory(new PostgresDatabase({ url: database!.url }), { watch: false })
    const memory = new InMemoryStore()
    try {
      const store = factory.create('reused_people', { schema })
      await store.setup!()
      const people = records.slice(0, 40)
      for (const target of [store, memory]) await target.create(people, q({}))
      // A write of several records answers them in no particular order: compared by id.
      const byId = (found: unknown) =>
        Array.isArray(found) ? [...(found as Data[])].sort((a, b) => Number(a.id) - Number(b.id)) : found
      const both = async (call: (target: Store) => Promise<unknown>) =>
        expect(byId(await call(store))).toEqual(byId(await call(memory)))
      for (const [id, age, city, pattern] of [
        [3, 10, 'Rome', '^p1'],
        [5, 60, 'Oslo', '^p2'],
        [7, 0, 'Lima', '7$']
      ] as const) {
        await both((target) => target.get(id, q({ age: { $gte: age } })))
        await both((target) => target.get(id, q({ name: { $search: pattern } })))
        await both((target) => target.create([{ id: id + 1000, name: `new${id}`, age, city, score: 1 }], q({})))
        await both((target) => target.patch(id, { score: age }, q({ city: { $ne: city } })))
        await both((target) => target.patch(null, { score: id }, q({ city, age: { $lt: age + 30 } })))
        await both((target) => target.patch(null, { nick: city }, q({ name: { $search: pattern } })))
        await both((target) => target.update(id + 1, { name: city, age, city, score: 2 }, q({ age: { $gte: 0 } })))
        await both((target) => target.remove(id + 2, q({ city: { $in: [city, 'Paris'] } })))
        await both((target) => target.remove(null, q({ score: id, city })))
        await both((target) => target.find(q({ $sort: { id: 1 } })))
      }
    } finally {
      await factory.close()
    }
  })
})
