import type { StoreQuery } from '../../domain/query/ast.js'
import { parseQuery } from '../../domain/query/parse-query.js'
import type { JsonSchemaObject } from '../../domain/schema/json-schema.js'
import type { Data } from '../../domain/service/service.js'
import type { StoreIndex } from '../../domain/store/store-factory.js'
import type { Store } from '../../domain/store/store.js'
import type { ContractTools } from '../contract.js'
import type { StoreContractOptions } from './store.contract.js'

/**
 * The `indexes` group of the Store contract (store.contract.ts).
 * Indexes and declared field types change how a store reads, never what it answers. Each query
 * runs on a store without indexes and on one with them (and, for the typed records, the schema):
 * both must give the same records, and the listed expectations. Mixed kinds, null, missing fields,
 * nested paths, sort ties and pages are where an index sees the data differently from a scan.
 */
export function indexCases(
  { group, test, beforeAll, afterAll, expect }: ContractTools,
  idProp: string,
  openStore: StoreContractOptions['open']
): void {
  const q = (raw: Record<string, unknown>): StoreQuery => parseQuery(raw, { operators: ['$search', '$contains'] })
  const names = (records: Data[]): string[] => records.map((record) => String(record.name))
  const closers: (() => Promise<void>)[] = []
  const open = async (name: string, options: { indexes?: StoreIndex[]; schema?: JsonSchemaObject }): Promise<Store> => {
    // One collection per id field: the two runs of these cases must not share one.
    const fixture = await openStore({ id: idProp, name: `${name}_${idProp}`, watch: false, ...options })
    closers.push(async () => fixture.close?.())
    await fixture.store.remove(null, q({}))
    return fixture.store
  }
  afterAll(async () => {
    for (const close of closers.splice(0)) await close()
  })

  /** Runs `query` with `run` on both stores: equal answers, which are returned. */
  async function same<R>(stores: [Store, Store], run: (store: Store) => Promise<R>): Promise<R> {
    const [plain, indexed] = await Promise.all(stores.map(run))
    expect(indexed).toEqual(plain)
    return plain!
  }

  group('indexed queries on records of mixed kinds', () => {
    let stores: [Store, Store]
    const records: Data[] = [
      { name: 'a01', city: 'Rome', age: 30, score: 5, address: { zip: '001' } },
      { name: 'a02', city: 'Rome', age: 30, score: 5 },
      { name: 'a03', city: 'Oslo', age: 25, score: 7, address: { zip: '002' } },
      { name: 'a04', city: 'Oslo', age: '25', score: 1 },
      { name: 'a05', city: 'Lima', age: null, score: 3 },
      { name: 'a06', city: 'Lima', score: 3, address: { zip: null } },
      { name: 'a07', city: null, age: 41, score: 9, address: 'flat' },
      { name: 'a08', age: 41, score: 2 },
      { name: 'a09', city: 'Rome', age: true, score: 5 },
      { name: 'a10', city: 'Rome', age: [30], score: 8, address: { zip: 7 } },
      { name: 'a11', city: 'Rome', age: { n: 30 }, score: 4, address: [{ zip: '001' }] },
      { name: 'a12', city: 'Rome', age: 30.5, score: 6, address: { zip: '001' } },
      { name: 'a13', city: 'Rome', age: 29, score: '5' },
      { name: 'a14', city: 'Paris', age: 35, score: 5 }
    ]
    const indexes: StoreIndex[] = [
      { fields: ['city'] },
      { fields: ['age'] },
      { fields: ['score'] },
      { fields: ['address.zip'] },
      { fields: ['city', 'score'] },
      { fields: ['city', 'age'], name: 'cityAge' }
    ]
    beforeAll(async () => {
      stores = [await open('mixed_plain', {}), await open('mixed_indexed', { indexes })]
      // Ids given, so that both stores hold equal records.
      for (const store of stores)
        await store.create(
          records.map((record, n) => ({ [idProp]: `m${n}`, ...record })),
          q({})
        )
    })

    const found = async (raw: Record<string, unknown>): Promise<string[]> =>
      names(
        await same(stores, async (store) => {
          const result = await store.find(q(raw))
          // Unsorted queries may come back in any order.
          return raw.$sort ? result : [...result].sort((a, b) => String(a.name).localeCompare(String(b.name)))
        })
      )

    test('matches equality and $in through an index, never null or missing fields', async () => {
      expect(await found({ city: 'Rome' })).toEqual(['a01', 'a02', 'a09', 'a10', 'a11', 'a12', 'a13'])
      expect(await found({ city: { $in: ['Oslo', 'Lima', 'Oslo'] } })).toEqual(['a03', 'a04', 'a05', 'a06'])
      expect(await found({ age: 30 })).toEqual(['a01', 'a02'])
      expect(await found({ age: '25' })).toEqual(['a04'])
      expect(await found({ score: 5 })).toEqual(['a01', 'a02', 'a09', 'a14'])
    })

    test('matches null and missing fields with equality to null, which no index holds', async () => {
      expect(await found({ city: null })).toEqual(['a07', 'a08'])
      expect(await found({ city: { $in: ['Paris', null] } })).toEqual(['a07', 'a08', 'a14'])
      expect(await found({ 'address.zip': null })).toEqual([
        'a02',
        'a04',
        'a05',
        'a06',
        'a07',
        'a08',
        'a09',
        'a11',
        'a13',
        'a14'
      ])
    })

    test("matches ranges through an index on values of the bound's kind only", async () => {
      expect(await found({ age: { $gte: 25, $lt: 35 } })).toEqual(['a01', 'a02', 'a03', 'a12', 'a13'])
      expect(await found({ age: { $gt: 30 } })).toEqual(['a07', 'a08', 'a12', 'a14'])
      expect(await found({ age: { $lte: '25' } })).toEqual(['a04'])
      expect(await found({ age: { $gt: '' } })).toEqual(['a04'])
      expect(await found({ score: { $lt: 3 } })).toEqual(['a04', 'a08'])
      expect(await found({ age: { $lt: 26 } })).toEqual(['a03'])
      expect(await found({ age: { $lte: true } })).toEqual(['a09'])
    })

    test('uses compound and nested indexes with the same answers', async () => {
      expect(await found({ city: 'Rome', score: { $gte: 5 } })).toEqual(['a01', 'a02', 'a09', 'a10', 'a12'])
      expect(await found({ city: 'Rome', score: 5 })).toEqual(['a01', 'a02', 'a09'])
      expect(await found({ city: { $in: ['Rome', 'Oslo'] }, score: { $in: [5, 7] } })).toEqual([
        'a01',
        'a02',
        'a03',
        'a09'
      ])
      expect(await found({ city: 'Rome', age: { $gt: 29 } })).toEqual(['a01', 'a02', 'a12'])
      expect(await found({ city: 'Rome', age: { $lt: 30 } })).toEqual(['a13'])
      expect(await found({ 'address.zip': '001' })).toEqual(['a01', 'a12'])
      expect(await found({ 'address.zip': { $gt: 0 } })).toEqual(['a10'])
    })

    test('sorts mixed kinds the same way when the query bounds the sorted field', async () => {
      expect(await found({ age: { $gte: 0 }, $sort: { age: -1, name: 1 }, $limit: 3 })).toEqual(['a07', 'a08', 'a14'])
      expect(await found({ score: { $gt: 0 }, $sort: { score: 1, name: 1 }, $skip: 2, $limit: 4 })).toEqual([
        'a05',
        'a06',
        'a11',
        'a01'
      ])
      expect(await found({ city: 'Rome', score: { $gte: 0 }, $sort: { score: -1, name: 1 }, $limit: 3 })).toEqual([
        'a10',
        'a12',
        'a01'
      ])
      expect(await found({ city: 'Rome', $sort: { score: 1, name: -1 }, $limit: 3 })).toEqual(['a11', 'a09', 'a02'])
      expect(await found({ $sort: { age: 1, name: 1 }, $limit: 4 })).toEqual(['a05', 'a06', 'a03', 'a13'])
    })

    test('counts and pages the same way', async () => {
      const page = await same(stores, (store) =>
        store.page(
          q({ city: 'Rome', age: { $gte: 29 }, $sort: { age: 1, name: 1 }, $limit: 2, $skip: 1, $select: ['name'] })
        )
      )
      expect(page.total).toBe(4)
      expect(names(page.data)).toEqual(['a01', 'a02'])
      expect(
        await same(stores, (store) => store.count(q({ city: { $in: ['Rome', 'Paris'] }, score: { $lt: 6 } }).filter))
      ).toBe(5)
      expect(await same(stores, (store) => store.count(q({ city: { $ne: 'Rome' } }).filter))).toBe(7)
    })

    test('writes through an index to exactly the matching records', async () => {
      const patched = await same(stores, async (store) =>
        names(await store.patch(null, { checked: true }, q({ city: 'Oslo', $select: ['name'] }))).sort()
      )
      expect(patched).toEqual(['a03', 'a04'])
      expect(await found({ checked: true })).toEqual(['a03', 'a04'])
      const removed = await same(stores, async (store) =>
        names(await store.remove(null, q({ age: { $gt: 40 } }))).sort()
      )
      expect(removed).toEqual(['a07', 'a08'])
      expect(await same(stores, (store) => store.count(q({}).filter))).toBe(12)
    })
  })

  group('indexed queries on records of declared types', () => {
    let stores: [Store, Store]
    const schema: JsonSchemaObject = {
      type: 'object',
      required: ['name', 'city', 'age', 'score', 'meta'],
      properties: {
        [idProp]: { type: 'integer' },
        name: { type: 'string' },
        city: { type: 'string' },
        age: { type: 'integer' },
        score: { type: 'number' },
        meta: { type: 'object', required: ['rank'], properties: { rank: { type: 'integer' } } }
      }
    }
    const cities = ['Rome', 'Oslo', 'Paris']
    // Few distinct scores and ages: many ties. Ids are given, so that they can order ties in both stores.
    const records: Data[] = Array.from({ length: 40 }, (_, n) => ({
      [idProp]: (n * 7) % 40,
      name: `p${String(n).padStart(2, '0')}`,
      city: cities[n % 3],
      age: 20 + ((n * 5) % 7),
      score: (n * 3) % 5,
      meta: { rank: n % 4 }
    }))
    beforeAll(async () => {
      stores = [
        await open('typed_plain', {}),
        await open('typed_indexed', {
          schema,
          indexes: [
            { fields: ['score'] },
            { fields: ['age'] },
            { fields: ['city', 'score'] },
            { fields: ['meta.rank'] }
          ]
        })
      ]
      for (const store of stores) await store.create(records, q({}))
    })

    const sorted = async (raw: Record<string, unknown>): Promise<string[]> =>
      names(await same(stores, (store) => store.find(q(raw))))

    test('sorts by an indexed field with a total order the same way, pages included', async () => {
      const all = await sorted({ $sort: { score: 1, name: 1 } })
      expect(all).toHaveLength(40)
      for (const [skip, limit] of [
        [0, 5],
        [3, 4],
        [12, 9],
        [38, 5]
      ]) {
        expect(await sorted({ $sort: { score: 1, name: 1 }, $skip: skip, $limit: limit })).toEqual(
          all.slice(skip, skip + limit)
        )
      }
      expect(await sorted({ $sort: { score: -1, [idProp]: -1 }, $limit: 6 })).toEqual(
        names(
          [...records]
            .sort((a, b) => Number(b.score) - Number(a.score) || Number(b[idProp]) - Number(a[idProp]))
            .slice(0, 6)
        )
      )
    })

    test('sorts by a compound index under an equality, and by mixed directions', async () => {
      expect(await sorted({ city: 'Oslo', $sort: { score: -1, name: 1 }, $limit: 5 })).toEqual(
        names(
          records
            .filter((record) => record.city === 'Oslo')
            .sort((a, b) => Number(b.score) - Number(a.score) || String(a.name).localeCompare(String(b.name)))
            .slice(0, 5)
        )
      )
      expect(
        await sorted({ city: { $in: ['Rome', 'Paris'] }, age: { $gte: 23 }, $sort: { age: -1, name: 1 }, $limit: 10 })
      ).toEqual(
        names(
          records
            .filter((record) => record.city !== 'Oslo' && Number(record.age) >= 23)
            .sort((a, b) => Number(b.age) - Number(a.age) || String(a.name).localeCompare(String(b.name)))
            .slice(0, 10)
        )
      )
      expect(await sorted({ 'meta.rank': { $lt: 2 }, $sort: { 'meta.rank': 1, name: -1 }, $limit: 3 })).toEqual([
        'p36',
        'p32',
        'p28'
      ])
    })

    test('pages through a sort with ties without repeating or losing a record', async () => {
      for (const store of stores) {
        const seen: string[] = []
        for (let skip = 0; skip < 40; skip += 7)
          seen.push(...names(await store.find(q({ $sort: { score: 1 }, $skip: skip, $limit: 7 }))))
        expect(seen).toHaveLength(40)
        expect(new Set(seen).size).toBe(40)
        const scores = await store.find(q({ $sort: { score: 1 }, $select: ['score'] }))
        expect(scores.map((record) => record.score)).toEqual(
          [...records.map((record) => record.score as number)].sort((a, b) => a - b)
        )
      }
    })

    test('gets and counts the same way', async () => {
      expect(await same(stores, (store) => store.get(21, q({})))).toEqual(
        records.find((record) => record[idProp] === 21)
      )
      expect(await same(stores, (store) => store.get('21', q({ $select: ['name'] })))).toEqual({
        [idProp]: 21,
        name: names(records.filter((record) => record[idProp] === 21))[0]
      })
      expect(await same(stores, (store) => store.get('x21', q({})))).toBeNull()
      expect(await same(stores, (store) => store.count(q({ city: 'Paris', score: { $gt: 1 } }).filter))).toBe(
        records.filter((record) => record.city === 'Paris' && Number(record.score) > 1).length
      )
    })
  })
}
