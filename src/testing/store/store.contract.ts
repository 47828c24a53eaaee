import type { StoreQuery } from '../../domain/query/ast.js'
import { parseQuery } from '../../domain/query/parse-query.js'
import type { Data, Id } from '../../domain/service/service.js'
import type { StoreOptions } from '../../domain/store/store-factory.js'
import type { Store } from '../../domain/store/store.js'
import { defineContract } from '../contract.js'
import type { StoreContext } from './store-context.js'
import { cursorCases } from './store-cursors.cases.js'
import { indexCases } from './store-indexes.cases.js'
import { liveCases } from './store-live.cases.js'
import { queryCases } from './store-queries.cases.js'
import { writeCases } from './store-writes.cases.js'

/** A store the contract opened, and how to let it go. */
export interface StoreFixture {
  store: Store
  close?(): Promise<void>
}

/**
 * What the contract asks for: a store over the collection `name` with these options. Names are unique in a run of
 * the contract, except that a case may open one name twice: two stores over one collection, as two processes
 * would have.
 */
export interface StoreRequest extends StoreOptions {
  id: string
  name: string
  /** The live members are under test: the store must publish its changes (`watch`). */
  watch: boolean
}

export interface StoreContractOptions {
  /** Opens a store for a request, e.g. through the adapter's StoreFactory. */
  open(request: StoreRequest): Promise<StoreFixture>
}

/**
 * The behaviour every adapter of the Store port must show: a translation of @feathersjs/adapter-tests (test
 * names in parentheses are theirs) to the port, plus plumage's own rows ($search, $contains, typed ranges,
 * numeric-string ids, copies), run once per id field name; and the optional live members as the App uses them.
 * Groups: `queries`, `writes`, `indexes`, `cursors`, and `live` (`live / watch`, `live / whenWatching`,
 * `live / publish`, `live / across processes`), each made of smaller ones. Unsorted results are compared as sets:
 * a database may return rows in any order.
 */
export const runStoreContract = defineContract<StoreContractOptions>('Store', (tools, options) => {
  const { describe, group, test, beforeAll, afterAll, beforeEach, expect } = tools
  for (const idProp of ['id', 'customId']) {
    describe(`with id field '${idProp}'`, () => {
      let fixture: StoreFixture | undefined
      let store: Store
      let alice: Data, bob: Data, doug: Data

      /** Feathers query syntax → AST, with the adapter's extra operators allowed. */
      const q = (raw: Record<string, unknown> = {}): StoreQuery => parseQuery(raw, { operators: store.operators })
      const idOf = (record: Data | null | undefined): Id => {
        const id = record?.[idProp]
        if (typeof id !== 'string' && typeof id !== 'number')
          throw new Error(`record has no ${idProp}: ${JSON.stringify(record)}`)
        return id
      }
      const names = (records: Data[]): string[] => records.map((record) => String(record.name))
      const nameSet = (records: Data[]): string[] => names(records).sort()
      const create = async (record: Data): Promise<Data> => (await store.create([record], q()))[0]!
      const findAll = (): Promise<Data[]> => store.find(q({ $sort: { name: 1 } }))

      beforeAll(async () => {
        fixture = await options.open({ id: idProp, name: `contract_${idProp}`, watch: false })
        store = fixture.store
      })
      afterAll(async () => {
        await fixture?.close?.()
      })
      beforeEach(async () => {
        await store.remove(null, parseQuery({}))
        ;[alice, bob, doug] = await store.create(
          [
            { name: 'Alice', age: 19, created: true },
            { name: 'Bob', age: 25 },
            { name: 'Doug', age: 32, created: true }
          ],
          q()
        )
      })

      const context: StoreContext = {
        idProp,
        q,
        idOf,
        names,
        nameSet,
        create,
        findAll,
        state: () => ({ store, alice, bob, doug })
      }

      group('queries', () => {
        group('basics', () => {
          test('exposes the configured id field name (.id)', () => {
            expect(store.id).toBe(idProp)
          })

          test('declares its extra query operators as $-names', () => {
            expect(Array.isArray(store.operators)).toBe(true)
            for (const operator of store.operators) expect(operator).toMatch(/^\$[a-z]+$/i)
          })
        })

        group('get', () => {
          test('returns the record with the id (.get)', async () => {
            expect(await store.get(idOf(doug), q())).toEqual({
              [idProp]: idOf(doug),
              name: 'Doug',
              age: 32,
              created: true
            })
          })

          test('returns only the $select fields and the id (.get + $select)', async () => {
            const record = await store.get(idOf(doug), q({ $select: ['name'] }))
            expect(record).toEqual({ [idProp]: idOf(doug), name: 'Doug' })
            expect(Object.keys(record!).sort()).toEqual([idProp, 'name'].sort())
          })

          test('returns null when the record does not match the query (.get + id + query)', async () => {
            expect(await store.get(idOf(doug), q({ name: 'Tester' }))).toBeNull()
          })

          test('returns the record when it matches the query', async () => {
            expect(await store.get(idOf(doug), q({ name: 'Doug', age: { $gt: 30 } }))).toMatchObject({ name: 'Doug' })
          })

          test('returns null for an unknown string id (.get + NotFound)', async () => {
            expect(await store.get('568225fbfe21222432e836ff', q())).toBeNull()
          })

          test('returns null for an unknown numeric id (.get + NotFound (integer))', async () => {
            expect(await store.get(123456789, q())).toBeNull()
          })

          test('returns null when the query names another id (.get + id + query id)', async () => {
            expect(await store.get(idOf(doug), q({ [idProp]: idOf(alice) }))).toBeNull()
          })

          test('finds a numeric id given as a numeric string ("0" finds 0)', async () => {
            await create({ [idProp]: 0, name: 'Zero' })
            expect(await store.get('0', q())).toEqual({ [idProp]: 0, name: 'Zero' })
          })
        })

        group('find', () => {
          test('returns every record as an array (.find)', async () => {
            const records = await store.find(q())
            expect(Array.isArray(records)).toBe(true)
            expect(nameSet(records)).toEqual(['Alice', 'Bob', 'Doug'])
          })

          test('returns an empty array when the store is empty', async () => {
            await store.remove(null, q())
            expect(await store.find(q())).toEqual([])
          })

          test('filters by equality (.find + equal)', async () => {
            expect(await store.find(q({ name: 'Alice' }))).toEqual([
              { [idProp]: idOf(alice), name: 'Alice', age: 19, created: true }
            ])
          })

          test('requires every equality to hold (.find + equal multiple)', async () => {
            expect(await store.find(q({ name: 'Alice', age: 20 }))).toEqual([])
            expect(names(await store.find(q({ name: 'Alice', age: 19 })))).toEqual(['Alice'])
          })

          test('compares equality with strict types (the string "25" is not the number 25)', async () => {
            expect(await store.find(q({ age: '25' }))).toEqual([])
            expect(names(await store.find(q({ age: 25 })))).toEqual(['Bob'])
          })

          test('filters by $eq like plain equality', async () => {
            expect(names(await store.find(q({ name: { $eq: 'Bob' } })))).toEqual(['Bob'])
          })

          test('filters by booleans', async () => {
            expect(nameSet(await store.find(q({ created: true })))).toEqual(['Alice', 'Doug'])
          })

          test('filters by a nested field with a dotted name', async () => {
            await store.create(
              [
                { name: 'Rita', address: { city: 'Rome', zip: '00100' } },
                { name: 'Mila', address: { city: 'Milan' } }
              ],
              q()
            )
            expect(names(await store.find(q({ 'address.city': 'Rome' })))).toEqual(['Rita'])
          })

          test('never reads into arrays with a dotted name', async () => {
            await store.create(
              [
                { name: 'Tagged', tags: ['red', 'blue'] },
                { name: 'Listed', list: [{ city: 'Rome' }] }
              ],
              q()
            )
            expect(await store.find(q({ 'tags.0': 'red' }))).toEqual([])
            expect(await store.find(q({ 'list.city': 'Rome' }))).toEqual([])
            expect(
              names(await store.find(q({ 'tags.0': null, name: { $in: ['Tagged', 'Listed'] }, $sort: { name: 1 } })))
            ).toEqual(['Listed', 'Tagged'])
          })
        })

        group('null and missing fields', () => {
          beforeEach(async () => {
            await store.create(
              [
                { name: 'Nina', city: null },
                { name: 'Rhea', city: 'Rome' }
              ],
              q()
            )
          })

          test('matches null and missing fields with equality to null', async () => {
            expect(nameSet(await store.find(q({ city: null })))).toEqual(['Alice', 'Bob', 'Doug', 'Nina'])
          })

          test('matches only present, non-null fields with $ne: null', async () => {
            expect(names(await store.find(q({ city: { $ne: null } })))).toEqual(['Rhea'])
          })

          test('matches missing fields with $ne of a value', async () => {
            expect(nameSet(await store.find(q({ city: { $ne: 'Rome' } })))).toEqual(['Alice', 'Bob', 'Doug', 'Nina'])
          })

          test('matches missing fields with $nin', async () => {
            expect(nameSet(await store.find(q({ city: { $nin: ['Rome'] } })))).toEqual(['Alice', 'Bob', 'Doug', 'Nina'])
          })

          test('never matches null or missing fields with a range operator', async () => {
            expect(names(await store.find(q({ city: { $gte: '' } })))).toEqual(['Rhea'])
          })

          test('treats fields named like Object.prototype members as missing', async () => {
            expect(await store.count(q({ toString: null }).filter)).toBe(5)
            expect(await store.find(q({ valueOf: { $ne: null } }))).toEqual([])
            const [record] = await store.find(q({ name: 'Bob', $select: ['toString', 'hasOwnProperty'] }))
            expect(Object.keys(record!)).toEqual([idProp])
          })
        })

        group('$sort, $limit, $skip, $select', () => {
          test('sorts ascending and descending (.find + $sort)', async () => {
            expect(names(await store.find(q({ $sort: { name: 1 } })))).toEqual(['Alice', 'Bob', 'Doug'])
            expect(names(await store.find(q({ $sort: { name: -1 } })))).toEqual(['Doug', 'Bob', 'Alice'])
          })

          test('sorts with directions given as strings (.find + $sort + string)', async () => {
            expect(names(await store.find(q({ $sort: { name: '1' } })))).toEqual(['Alice', 'Bob', 'Doug'])
            expect(names(await store.find(q({ $sort: { name: 'desc' } })))).toEqual(['Doug', 'Bob', 'Alice'])
          })

          test('sorts numbers numerically, not as text', async () => {
            await store.create(
              [
                { name: 'Tiny', age: 9 },
                { name: 'Old', age: 100 }
              ],
              q()
            )
            expect(names(await store.find(q({ $sort: { age: 1 } })))).toEqual(['Tiny', 'Alice', 'Bob', 'Doug', 'Old'])
          })

          test('sorts strings by character code (uppercase before lowercase), as RethinkDB does', async () => {
            await create({ name: 'bea' })
            expect(names(await store.find(q({ $sort: { name: 1 } })))).toEqual(['Alice', 'Bob', 'Doug', 'bea'])
          })

          test('sorts by several keys in the key order of $sort', async () => {
            await store.remove(null, q())
            await store.create(
              [
                { name: 'Ann', age: 30 },
                { name: 'Bob', age: 20 },
                { name: 'Cid', age: 30 },
                { name: 'Ann', age: 20, tag: 'young Ann' }
              ],
              q()
            )
            const byAgeThenName = await store.find(q({ $sort: { age: -1, name: 1 } }))
            expect(byAgeThenName.map((r) => `${String(r.name)}${String(r.age)}`)).toEqual([
              'Ann30',
              'Cid30',
              'Ann20',
              'Bob20'
            ])
            const byNameThenAge = await store.find(q({ $sort: { name: 1, age: -1 } }))
            expect(byNameThenAge.map((r) => `${String(r.name)}${String(r.age)}`)).toEqual([
              'Ann30',
              'Ann20',
              'Bob20',
              'Cid30'
            ])
          })

          test('returns at most $limit records (.find + $limit)', async () => {
            expect(await store.find(q({ $limit: 2 }))).toHaveLength(2)
          })

          test('returns no records when $limit is 0 (.find + $limit 0)', async () => {
            expect(await store.find(q({ $limit: 0 }))).toEqual([])
          })

          test('skips the first $skip records in sort order (.find + $skip)', async () => {
            expect(names(await store.find(q({ $sort: { name: 1 }, $skip: 1 })))).toEqual(['Bob', 'Doug'])
          })

          test('returns nothing when $skip passes the last record', async () => {
            expect(await store.find(q({ $skip: 3 }))).toEqual([])
          })

          test('applies $sort, then $skip, then $limit (.find + $sort + $limit + $skip)', async () => {
            expect(names(await store.find(q({ $sort: { name: -1 }, $skip: 1, $limit: 1 })))).toEqual(['Bob'])
          })

          test('returns only the $select fields and the id (.find + $select)', async () => {
            const records = await store.find(q({ name: 'Alice', $select: ['name'] }))
            expect(records).toEqual([{ [idProp]: idOf(alice), name: 'Alice' }])
            expect(Object.keys(records[0]!).sort()).toEqual([idProp, 'name'].sort())
          })

          test('returns only the id when $select names no existing field', async () => {
            const records = await store.find(q({ name: 'Bob', $select: ['password'] }))
            expect(records).toHaveLength(1)
            expect(Object.keys(records[0]!)).toEqual([idProp])
          })
        })

        queryCases(tools, context)
      })
      group('writes', () => writeCases(tools, context))
      group('indexes', () => indexCases(tools, idProp, options.open))
      group('cursors', () => cursorCases(tools, idProp, options.open))
    })
  }
  group('live', () => liveCases(tools, options.open))
})
