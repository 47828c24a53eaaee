import type { Query } from '../../src/domain/query/ast.js'
import { parseQuery } from '../../src/domain/query/parse-query.js'
import type { Data, Id } from '../../src/domain/service/service.js'
import type { Store } from '../../src/domain/store/store.js'

export interface StoreFixture { store: Store; close(): Promise<void> }

/**
 * The behaviour every adapter of the Store port must show: a translation of @feathersjs/adapter-tests
 * (test names in quotes are theirs) to the port, plus plumage's own rows ($search, $contains, typed
 * ranges, numeric-string ids, copies). Unsorted results are compared as sets: a database may return
 * rows in any order.
 */
export function storeContract(adapterName: string, createStore: (options: { id: string }) => Promise<StoreFixture>): void {
  describe.each(['id', 'customId'])(`${adapterName} store: Store contract with id field '%s'`, (idProp) => {
    let fixture: StoreFixture | undefined
    let store: Store
    let alice: Data, bob: Data, doug: Data

    /** Feathers query syntax → AST, with the adapter's extra operators allowed. */
    const q = (raw: Record<string, unknown> = {}): Query => parseQuery(raw, { operators: store.operators })
    const idOf = (record: Data | null | undefined): Id => {
      const id = record?.[idProp]
      if (typeof id !== 'string' && typeof id !== 'number') throw new Error(`record has no ${idProp}: ${JSON.stringify(record)}`)
      return id
    }
    const names = (records: Data[]): string[] => records.map((record) => String(record.name))
    const nameSet = (records: Data[]): string[] => names(records).sort()
    const create = async (record: Data): Promise<Data> => (await store.create([record]))[0]!
    const findAll = (): Promise<Data[]> => store.find(q({ $sort: { name: 1 } }))

    beforeAll(async () => {
      fixture = await createStore({ id: idProp })
      store = fixture.store
    })
    afterAll(async () => {
      await fixture?.close()
    })
    beforeEach(async () => {
      await store.remove(null, parseQuery({}))
      ;[alice, bob, doug] = await store.create([
        { name: 'Alice', age: 19, created: true },
        { name: 'Bob', age: 25 },
        { name: 'Doug', age: 32, created: true }
      ])
    })

    describe('basics', () => {
      it('exposes the configured id field name (.id)', () => {
        expect(store.id).toBe(idProp)
      })

      it('declares its extra query operators as $-names', () => {
        expect(Array.isArray(store.operators)).toBe(true)
        for (const operator of store.operators) expect(operator).toMatch(/^\$[a-z]+$/i)
      })
    })

    describe('get', () => {
      it('returns the record with the id (.get)', async () => {
        expect(await store.get(idOf(doug), q())).toEqual({ [idProp]: idOf(doug), name: 'Doug', age: 32, created: true })
      })

      it('returns only the $select fields and the id (.get + $select)', async () => {
        const record = await store.get(idOf(doug), q({ $select: ['name'] }))
        expect(record).toEqual({ [idProp]: idOf(doug), name: 'Doug' })
        expect(Object.keys(record!).sort()).toEqual([idProp, 'name'].sort())
      })

      it('returns null when the record does not match the query (.get + id + query)', async () => {
        expect(await store.get(idOf(doug), q({ name: 'Tester' }))).toBeNull()
      })

      it('returns the record when it matches the query', async () => {
        expect(await store.get(idOf(doug), q({ name: 'Doug', age: { $gt: 30 } }))).toMatchObject({ name: 'Doug' })
      })

      it('returns null for an unknown string id (.get + NotFound)', async () => {
        expect(await store.get('568225fbfe21222432e836ff', q())).toBeNull()
      })

      it('returns null for an unknown numeric id (.get + NotFound (integer))', async () => {
        expect(await store.get(123456789, q())).toBeNull()
      })

      it('returns null when the query names another id (.get + id + query id)', async () => {
        expect(await store.get(idOf(doug), q({ [idProp]: idOf(alice) }))).toBeNull()
      })

      it('finds a numeric id given as a numeric string ("0" finds 0)', async () => {
        await create({ [idProp]: 0, name: 'Zero' })
        expect(await store.get('0', q())).toEqual({ [idProp]: 0, name: 'Zero' })
      })
    })

    describe('find', () => {
      it('returns every record as an array (.find)', async () => {
        const records = await store.find(q())
        expect(Array.isArray(records)).toBe(true)
        expect(nameSet(records)).toEqual(['Alice', 'Bob', 'Doug'])
      })

      it('returns an empty array when the store is empty', async () => {
        await store.remove(null, q())
        expect(await store.find(q())).toEqual([])
      })

      it('filters by equality (.find + equal)', async () => {
        expect(await store.find(q({ name: 'Alice' }))).toEqual([{ [idProp]: idOf(alice), name: 'Alice', age: 19, created: true }])
      })

      it('requires every equality to hold (.find + equal multiple)', async () => {
        expect(await store.find(q({ name: 'Alice', age: 20 }))).toEqual([])
        expect(names(await store.find(q({ name: 'Alice', age: 19 })))).toEqual(['Alice'])
      })

      it('compares equality with strict types (the string "25" is not the number 25)', async () => {
        expect(await store.find(q({ age: '25' }))).toEqual([])
        expect(names(await store.find(q({ age: 25 })))).toEqual(['Bob'])
      })

      it('filters by $eq like plain equality', async () => {
        expect(names(await store.find(q({ name: { $eq: 'Bob' } })))).toEqual(['Bob'])
      })

      it('filters by booleans', async () => {
        expect(nameSet(await store.find(q({ created: true })))).toEqual(['Alice', 'Doug'])
      })

      it('filters by a nested field with a dotted name', async () => {
        await store.create([
          { name: 'Rita', address: { city: 'Rome', zip: '00100' } },
          { name: 'Mila', address: { city: 'Milan' } }
        ])
        expect(names(await store.find(q({ 'address.city': 'Rome' })))).toEqual(['Rita'])
      })
    })

    describe('null and missing fields', () => {
      beforeEach(async () => {
        await store.create([{ name: 'Nina', city: null }, { name: 'Rhea', city: 'Rome' }])
      })

      it('matches null and missing fields with equality to null', async () => {
        expect(nameSet(await store.find(q({ city: null })))).toEqual(['Alice', 'Bob', 'Doug', 'Nina'])
      })

      it('matches only present, non-null fields with $ne: null', async () => {
        expect(names(await store.find(q({ city: { $ne: null } })))).toEqual(['Rhea'])
      })

      it('matches missing fields with $ne of a value', async () => {
        expect(nameSet(await store.find(q({ city: { $ne: 'Rome' } })))).toEqual(['Alice', 'Bob', 'Doug', 'Nina'])
      })

      it('matches missing fields with $nin', async () => {
        expect(nameSet(await store.find(q({ city: { $nin: ['Rome'] } })))).toEqual(['Alice', 'Bob', 'Doug', 'Nina'])
      })

      it('never matches null or missing fields with a range operator', async () => {
        expect(names(await store.find(q({ city: { $gte: '' } })))).toEqual(['Rhea'])
      })

      it('treats fields named like Object.prototype members as missing', async () => {
        expect(await store.count(q({ toString: null }).filter)).toBe(5)
        expect(await store.find(q({ valueOf: { $ne: null } }))).toEqual([])
        const [record] = await store.find(q({ name: 'Bob', $select: ['toString', 'hasOwnProperty'] }))
        expect(Object.keys(record!)).toEqual([idProp])
      })
    })

    describe('$sort, $limit, $skip, $select', () => {
      it('sorts ascending and descending (.find + $sort)', async () => {
        expect(names(await store.find(q({ $sort: { name: 1 } })))).toEqual(['Alice', 'Bob', 'Doug'])
        expect(names(await store.find(q({ $sort: { name: -1 } })))).toEqual(['Doug', 'Bob', 'Alice'])
      })

      it('sorts with directions given as strings (.find + $sort + string)', async () => {
        expect(names(await store.find(q({ $sort: { name: '1' } })))).toEqual(['Alice', 'Bob', 'Doug'])
        expect(names(await store.find(q({ $sort: { name: 'desc' } })))).toEqual(['Doug', 'Bob', 'Alice'])
      })

      it('sorts numbers numerically, not as text', async () => {
        await store.create([{ name: 'Tiny', age: 9 }, { name: 'Old', age: 100 }])
        expect(names(await store.find(q({ $sort: { age: 1 } })))).toEqual(['Tiny', 'Alice', 'Bob', 'Doug', 'Old'])
      })

      it('sorts strings by character code (uppercase before lowercase), as RethinkDB does', async () => {
        await create({ name: 'bea' })
        expect(names(await store.find(q({ $sort: { name: 1 } })))).toEqual(['Alice', 'Bob', 'Doug', 'bea'])
      })

      it('sorts by several keys in the key order of $sort', async () => {
        await store.remove(null, q())
        await store.create([
          { name: 'Ann', age: 30 }, { name: 'Bob', age: 20 }, { name: 'Cid', age: 30 }, { name: 'Ann', age: 20, tag: 'young Ann' }
        ])
        const byAgeThenName = await store.find(q({ $sort: { age: -1, name: 1 } }))
        expect(byAgeThenName.map((r) => `${String(r.name)}${String(r.age)}`)).toEqual(['Ann30', 'Cid30', 'Ann20', 'Bob20'])
        const byNameThenAge = await store.find(q({ $sort: { name: 1, age: -1 } }))
        expect(byNameThenAge.map((r) => `${String(r.name)}${String(r.age)}`)).toEqual(['Ann30', 'Ann20', 'Bob20', 'Cid30'])
      })

      it('returns at most $limit records (.find + $limit)', async () => {
        expect(await store.find(q({ $limit: 2 }))).toHaveLength(2)
      })

      it('returns no records when $limit is 0 (.find + $limit 0)', async () => {
        expect(await store.find(q({ $limit: 0 }))).toEqual([])
      })

      it('skips the first $skip records in sort order (.find + $skip)', async () => {
        expect(names(await store.find(q({ $sort: { name: 1 }, $skip: 1 })))).toEqual(['Bob', 'Doug'])
      })

      it('returns nothing when $skip passes the last record', async () => {
        expect(await store.find(q({ $skip: 3 }))).toEqual([])
      })

      it('applies $sort, then $skip, then $limit (.find + $sort + $limit + $skip)', async () => {
        expect(names(await store.find(q({ $sort: { name: -1 }, $skip: 1, $limit: 1 })))).toEqual(['Bob'])
      })

      it('returns only the $select fields and the id (.find + $select)', async () => {
        const records = await store.find(q({ name: 'Alice', $select: ['name'] }))
        expect(records).toEqual([{ [idProp]: idOf(alice), name: 'Alice' }])
        expect(Object.keys(records[0]!).sort()).toEqual([idProp, 'name'].sort())
      })

      it('returns only the id when $select names no existing field', async () => {
        const records = await store.find(q({ name: 'Bob', $select: ['password'] }))
        expect(records).toHaveLength(1)
        expect(Object.keys(records[0]!)).toEqual([idProp])
      })
    })

    describe('operators', () => {
      it('matches any listed value with $in (.find + $in)', async () => {
        expect(names(await store.find(q({ name: { $in: ['Alice', 'Bob'] }, $sort: { name: 1 } })))).toEqual(['Alice', 'Bob'])
      })

      it('matches nothing with an empty $in', async () => {
        expect(await store.find(q({ name: { $in: [] } }))).toEqual([])
      })

      it('matches none of the listed values with $nin (.find + $nin)', async () => {
        expect(names(await store.find(q({ name: { $nin: ['Alice', 'Bob'] } })))).toEqual(['Doug'])
      })

      it('matches everything with an empty $nin', async () => {
        expect(await store.find(q({ name: { $nin: [] } }))).toHaveLength(3)
      })

      it('filters with $lt (.find + $lt)', async () => {
        expect(nameSet(await store.find(q({ age: { $lt: 30 } })))).toEqual(['Alice', 'Bob'])
      })

      it('filters with $lte (.find + $lte)', async () => {
        expect(nameSet(await store.find(q({ age: { $lte: 25 } })))).toEqual(['Alice', 'Bob'])
      })

      it('filters with $gt (.find + $gt)', async () => {
        expect(names(await store.find(q({ age: { $gt: 30 } })))).toEqual(['Doug'])
      })

      it('filters with $gte (.find + $gte)', async () => {
        expect(nameSet(await store.find(q({ age: { $gte: 25 } })))).toEqual(['Bob', 'Doug'])
      })

      it('filters with $ne (.find + $ne)', async () => {
        expect(nameSet(await store.find(q({ age: { $ne: 25 } })))).toEqual(['Alice', 'Doug'])
      })

      it('combines operators on one field (.find + $gt + $lt + $sort)', async () => {
        expect(names(await store.find(q({ age: { $gt: 18, $lt: 30 }, $sort: { name: 1 } })))).toEqual(['Alice', 'Bob'])
      })

      it('compares strings with range operators', async () => {
        expect(nameSet(await store.find(q({ name: { $gte: 'B' } })))).toEqual(['Bob', 'Doug'])
      })

      it('compares only values of the same type with range operators', async () => {
        await store.create([{ name: 'NumFive', n: 5 }, { name: 'TextFive', n: '5' }])
        expect(names(await store.find(q({ n: { $lt: 10 } })))).toEqual(['NumFive'])
        expect(names(await store.find(q({ n: { $gt: 1 } })))).toEqual(['NumFive'])
        expect(names(await store.find(q({ n: { $lt: '9' } })))).toEqual(['TextFive'])
        expect(names(await store.find(q({ n: { $gte: '0' } })))).toEqual(['TextFive'])
      })

      it('matches any criteria with $or (.find + $or)', async () => {
        expect(names(await store.find(q({ $or: [{ name: 'Alice' }, { name: 'Bob' }], $sort: { name: 1 } })))).toEqual(['Alice', 'Bob'])
      })

      it('matches operators inside $or (.find + $or nested + $sort)', async () => {
        const records = await store.find(q({ $or: [{ name: 'Doug' }, { age: { $gte: 18, $lt: 25 } }], $sort: { name: 1 } }))
        expect(names(records)).toEqual(['Alice', 'Doug'])
      })

      it('matches $or nested in $or', async () => {
        expect(nameSet(await store.find(q({ $or: [{ $or: [{ name: 'Alice' }, { age: 32 }] }, { name: 'Nobody' }] })))).toEqual(['Alice', 'Doug'])
      })

      it('requires every criteria with $and (.find + $and)', async () => {
        expect(names(await store.find(q({ $and: [{ age: { $gt: 18 } }, { age: { $lt: 30 } }], $sort: { name: 1 } })))).toEqual(['Alice', 'Bob'])
        expect(await store.find(q({ $and: [{ name: 'Alice' }, { age: 25 }] }))).toEqual([])
      })

      it('combines $and with $or (.find + $and + $or)', async () => {
        const records = await store.find(q({ $and: [{ $or: [{ name: 'Alice' }, { name: 'Doug' }] }, { age: { $gt: 20 } }] }))
        expect(names(records)).toEqual(['Doug'])
      })

      it('combines $or with field criteria at the top level', async () => {
        expect(names(await store.find(q({ created: true, $or: [{ name: 'Bob' }, { age: 19 }] })))).toEqual(['Alice'])
      })
    })

    describe('$search', () => {
      beforeEach(async () => {
        await store.create([{ name: 'Ann' }, { name: 'JoANNa' }, { name: 'bAnn' }, { name: 12345 }, { name: ['Ann'] }])
      })

      it('declares $search', () => {
        expect(store.operators).toContain('$search')
      })

      it('matches with an anchored RE2 pattern', async () => {
        expect(nameSet(await store.find(q({ name: { $search: '^A' } })))).toEqual(['Alice', 'Ann'])
      })

      it('matches anywhere in the string when not anchored', async () => {
        expect(nameSet(await store.find(q({ name: { $search: 'li' } })))).toEqual(['Alice'])
      })

      it('honours the RE2 (?i) flag', async () => {
        expect(nameSet(await store.find(q({ name: { $search: '(?i)ann' } })))).toEqual(['Ann', 'JoANNa', 'bAnn'])
      })

      it('never matches non-string field values', async () => {
        expect(await store.find(q({ name: { $search: '^(1|\\[)' } }))).toEqual([])
        expect(await store.find(q({ age: { $search: '1' } }))).toEqual([])
      })

      it('completes a catastrophic-backtracking pattern on a long string', async () => {
        await create({ name: 'long', text: `${'a'.repeat(50_000)}!` })
        expect(await store.find(q({ text: { $search: '(a+)+$' } }))).toEqual([])
      })
    })

    describe('$contains', () => {
      beforeEach(async () => {
        await store.create([
          { name: 'Tagged', tags: ['red', 'blue', 3] },
          { name: 'Other', tags: ['green'] },
          { name: 'Text', tags: 'red blue' }
        ])
      })

      it('declares $contains', () => {
        expect(store.operators).toContain('$contains')
      })

      it('matches an array field that contains the value', async () => {
        expect(names(await store.find(q({ tags: { $contains: 'red' } })))).toEqual(['Tagged'])
        expect(names(await store.find(q({ tags: { $contains: 3 } })))).toEqual(['Tagged'])
      })

      it('compares the contained value with strict types', async () => {
        expect(await store.find(q({ tags: { $contains: '3' } }))).toEqual([])
      })

      it('never matches a non-array field', async () => {
        expect(await store.find(q({ tags: { $contains: 'red blue' } }))).toEqual([])
        expect(await store.find(q({ name: { $contains: 'A' } }))).toEqual([])
      })
    })

    describe('page and count', () => {
      it('returns the total and the requested page (.find + paginate)', async () => {
        const page = await store.page(q({ $sort: { name: -1 }, $limit: 1 }))
        expect(page).toEqual({ total: 3, data: [{ [idProp]: idOf(doug), name: 'Doug', age: 32, created: true }] })
      })

      it('counts only the records matching the query (.find + paginate + query)', async () => {
        const page = await store.page(q({ $sort: { name: -1 }, name: 'Doug', $limit: 1 }))
        expect(page.total).toBe(1)
        expect(names(page.data)).toEqual(['Doug'])
      })

      it('counts every match before $skip and $limit (.find + paginate + $limit + $skip)', async () => {
        const page = await store.page(q({ $skip: 1, $limit: 2, $sort: { name: -1 } }))
        expect(page.total).toBe(3)
        expect(names(page.data)).toEqual(['Bob', 'Alice'])
      })

      it('returns total only when $limit is 0 (.find + paginate + $limit 0)', async () => {
        expect(await store.page(q({ $limit: 0 }))).toEqual({ total: 3, data: [] })
      })

      it('returns every match when there is no $limit', async () => {
        const page = await store.page(q({ age: { $gt: 18 } }))
        expect(page.total).toBe(3)
        expect(nameSet(page.data)).toEqual(['Alice', 'Bob', 'Doug'])
      })

      it('keeps the total when $skip passes the last match', async () => {
        expect(await store.page(q({ $skip: 10, $limit: 5 }))).toEqual({ total: 3, data: [] })
      })

      it('projects the page data with $select', async () => {
        const page = await store.page(q({ name: 'Bob', $select: ['age'] }))
        expect(page).toEqual({ total: 1, data: [{ [idProp]: idOf(bob), age: 25 }] })
      })

      it('counts the records matching a filter', async () => {
        expect(await store.count(q().filter)).toBe(3)
        expect(await store.count(q({ created: true }).filter)).toBe(2)
        expect(await store.count(q({ name: 'Nobody' }).filter)).toBe(0)
      })
    })

    describe('create', () => {
      it('returns the created record with a generated id and leaves the input alone (.create)', async () => {
        const input = { name: 'Bill', age: 40 }
        const [record] = await store.create([input])
        expect(input).toEqual({ name: 'Bill', age: 40 })
        expect(record).toEqual({ [idProp]: idOf(record), name: 'Bill', age: 40 })
        expect(await store.get(idOf(record), q())).toEqual(record)
      })

      it('creates several records in one call, in input order, with distinct ids (.create multi)', async () => {
        const records = await store.create([{ name: 'Gerald', age: 18 }, { name: 'Herald', age: 18 }, { name: 'Harold', age: 18 }])
        expect(names(records)).toEqual(['Gerald', 'Herald', 'Harold'])
        expect(new Set(records.map(idOf)).size).toBe(3)
        expect(nameSet(await store.find(q({ age: 18 })))).toEqual(['Gerald', 'Harold', 'Herald'])
      })

      it('creates nothing from an empty list', async () => {
        expect(await store.create([])).toEqual([])
        expect(await store.count(q().filter)).toBe(3)
      })

      it('keeps an id given in the data', async () => {
        const [text, number] = await store.create([{ [idProp]: 'given', name: 'Text' }, { [idProp]: 42, name: 'Number' }])
        expect(idOf(text)).toBe('given')
        expect(idOf(number)).toBe(42)
        expect(await store.get('given', q())).toEqual({ [idProp]: 'given', name: 'Text' })
        expect(await store.get(42, q())).toEqual({ [idProp]: 42, name: 'Number' })
      })

      it('stores the id under the configured field name only', async () => {
        const record = await create({ name: 'Custom' })
        expect(record[idProp]).toBeDefined()
        if (idProp !== 'id') expect(record).not.toHaveProperty('id')
      })

      it('is not affected by later changes to the input', async () => {
        const input: Data = { name: 'Mutable', tags: ['x'] }
        const record = await create(input)
        input.name = 'Changed'
        ;(input.tags as string[]).push('y')
        expect(await store.get(idOf(record), q())).toEqual({ [idProp]: idOf(record), name: 'Mutable', tags: ['x'] })
      })
    })

    describe('update', () => {
      it('replaces every field but the id and leaves the input alone (.update)', async () => {
        const input = { [idProp]: idOf(doug), name: 'Dougler' }
        const record = await store.update(idOf(doug), input, q())
        expect(input).toEqual({ [idProp]: idOf(doug), name: 'Dougler' })
        expect(record).toEqual({ [idProp]: idOf(doug), name: 'Dougler' })
        expect(record).not.toHaveProperty('age')
        const stored = await store.get(idOf(doug), q())
        expect(stored).toEqual({ [idProp]: idOf(doug), name: 'Dougler' })
        expect(stored).not.toHaveProperty('created')
      })

      it('keeps the stored id when the data carries another one', async () => {
        const record = await store.update(idOf(doug), { [idProp]: 999, name: 'Dougler' }, q())
        expect(record).toEqual({ [idProp]: idOf(doug), name: 'Dougler' })
        expect(await store.get(999, q())).toBeNull()
        expect(await store.count(q().filter)).toBe(3)
      })

      it('returns only the $select fields and the id (.update + $select)', async () => {
        const record = await store.update(idOf(doug), { name: 'Dougler', age: 10 }, q({ $select: ['name'] }))
        expect(record).toEqual({ [idProp]: idOf(doug), name: 'Dougler' })
        expect(record).not.toHaveProperty('age')
        expect(await store.get(idOf(doug), q())).toMatchObject({ age: 10 })
      })

      it('returns null and changes nothing when the record does not match the query (.update + id + query)', async () => {
        expect(await store.update(idOf(doug), { name: 'Dougler' }, q({ name: 'Tester' }))).toBeNull()
        expect(await store.get(idOf(doug), q())).toMatchObject({ name: 'Doug', age: 32 })
      })

      it('returns null and creates nothing for an unknown string id (.update + NotFound)', async () => {
        expect(await store.update('568225fbfe21222432e836ff', { name: 'NotFound' }, q())).toBeNull()
        expect(await store.find(q({ name: 'NotFound' }))).toEqual([])
      })

      it('returns null for an unknown numeric id (.update + NotFound (integer))', async () => {
        expect(await store.update(123456789, { name: 'NotFound' }, q())).toBeNull()
        expect(await store.count(q().filter)).toBe(3)
      })

      it('returns null when the query excludes the record (.update + query + NotFound)', async () => {
        const dave = await create({ name: 'Dave' })
        expect(await store.update(idOf(dave), { name: 'UpdatedDave' }, q({ name: 'NotDave' }))).toBeNull()
        expect(await store.get(idOf(dave), q())).toMatchObject({ name: 'Dave' })
      })

      it('returns null when the query names another id (.update + id + query id)', async () => {
        expect(await store.update(idOf(doug), { name: 'Dougler', age: 33 }, q({ [idProp]: idOf(alice) }))).toBeNull()
        expect(await store.get(idOf(alice), q())).toMatchObject({ name: 'Alice', age: 19 })
      })

      it('updates a numeric id given as a numeric string', async () => {
        await create({ [idProp]: 0, name: 'Zero' })
        expect(await store.update('0', { name: 'Nil' }, q())).toEqual({ [idProp]: 0, name: 'Nil' })
        expect(await store.get(0, q())).toEqual({ [idProp]: 0, name: 'Nil' })
      })
    })

    describe('patch', () => {
      it('merges the data into the record and leaves the input alone (.patch)', async () => {
        const input = { [idProp]: idOf(doug), name: 'PatchDoug' }
        const records = await store.patch(idOf(doug), input, q())
        expect(input).toEqual({ [idProp]: idOf(doug), name: 'PatchDoug' })
        expect(records).toEqual([{ [idProp]: idOf(doug), name: 'PatchDoug', age: 32, created: true }])
        expect(await store.get(idOf(doug), q())).toEqual(records[0])
      })

      it('never changes the id', async () => {
        const records = await store.patch(idOf(doug), { [idProp]: 999, age: 33 }, q())
        expect(idOf(records[0])).toEqual(idOf(doug))
        expect(await store.get(999, q())).toBeNull()
        expect(await store.get(idOf(doug), q())).toMatchObject({ name: 'Doug', age: 33 })
      })

      it('replaces nested objects instead of merging them deeply', async () => {
        const rita = await create({ name: 'Rita', address: { city: 'Rome', zip: '00100' } })
        await store.patch(idOf(rita), { address: { city: 'Milan' } }, q())
        expect((await store.get(idOf(rita), q()))?.address).toEqual({ city: 'Milan' })
      })

      it('stores null values', async () => {
        await store.patch(idOf(doug), { age: null }, q())
        expect(await store.get(idOf(doug), q())).toEqual({ [idProp]: idOf(doug), name: 'Doug', age: null, created: true })
      })

      it('returns only the $select fields and the id (.patch + $select)', async () => {
        const records = await store.patch(idOf(doug), { name: 'PatchDoug' }, q({ $select: ['name'] }))
        expect(records).toEqual([{ [idProp]: idOf(doug), name: 'PatchDoug' }])
        expect(records[0]).not.toHaveProperty('age')
      })

      it('patches nothing when the record does not match the query (.patch + id + query)', async () => {
        expect(await store.patch(idOf(doug), { name: 'id patched doug' }, q({ name: 'Tester' }))).toEqual([])
        expect(await store.get(idOf(doug), q())).toMatchObject({ name: 'Doug' })
      })

      it('patches every match when the id is null (.patch multiple)', async () => {
        const records = await store.patch(null, { age: 2 }, q({ created: true }))
        expect(nameSet(records)).toEqual(['Alice', 'Doug'])
        for (const record of records) expect(record.age).toBe(2)
        expect(names(await store.find(q({ age: 2, $sort: { name: 1 } })))).toEqual(['Alice', 'Doug'])
        expect(await store.get(idOf(bob), q())).toMatchObject({ age: 25 })
      })

      it('is not limited by $limit when the id is null (.patch multiple no pagination)', async () => {
        const records = await store.patch(null, { age: 2 }, q({ $limit: 1 }))
        expect(records).toHaveLength(3)
        expect(await store.count(q({ age: 2 }).filter)).toBe(3)
      })

      it('returns the patched records when the query still matches them (.patch multi query same)', async () => {
        const records = await store.patch(null, { age: 2 }, q({ age: { $lt: 30 } }))
        expect(nameSet(records)).toEqual(['Alice', 'Bob'])
        for (const record of records) expect(record.age).toBe(2)
      })

      it('returns the patched records when the patch changes the queried field (.patch multi query changed)', async () => {
        await store.create([{ name: 'Dave', age: 10 }, { name: 'David', age: 10 }])
        const records = await store.patch(null, { age: 2 }, q({ age: 10 }))
        expect(nameSet(records)).toEqual(['Dave', 'David'])
        for (const record of records) expect(record.age).toBe(2)
      })

      it('returns an empty list when nothing matches the id null query', async () => {
        expect(await store.patch(null, { age: 2 }, q({ name: 'Nobody' }))).toEqual([])
      })

      it('projects every patched record with $select when the id is null', async () => {
        const records = await store.patch(null, { age: 3 }, q({ created: true, $select: ['age'] }))
        expect(records).toHaveLength(2)
        for (const record of records) expect(Object.keys(record).sort()).toEqual(['age', idProp].sort())
      })

      it('patches nothing for an unknown string id (.patch + NotFound)', async () => {
        expect(await store.patch('568225fbfe21222432e836ff', { name: 'PatchDoug' }, q())).toEqual([])
        expect(await store.count(q({ name: 'PatchDoug' }).filter)).toBe(0)
      })

      it('patches nothing for an unknown numeric id (.patch + NotFound (integer))', async () => {
        expect(await store.patch(123456789, { name: 'PatchDoug' }, q())).toEqual([])
        expect(await store.count(q().filter)).toBe(3)
      })

      it('patches nothing when the query excludes the record (.patch + query + NotFound)', async () => {
        const dave = await create({ name: 'Dave' })
        expect(await store.patch(idOf(dave), { name: 'PatchedDave' }, q({ name: 'NotDave' }))).toEqual([])
        expect(await store.get(idOf(dave), q())).toMatchObject({ name: 'Dave' })
      })

      it('patches nothing when the query names another id (.patch + id + query id)', async () => {
        expect(await store.patch(idOf(doug), { age: 33 }, q({ [idProp]: idOf(alice) }))).toEqual([])
        expect(await store.get(idOf(alice), q())).toMatchObject({ age: 19 })
        expect(await store.get(idOf(doug), q())).toMatchObject({ age: 32 })
      })

      it('patches a numeric id given as a numeric string', async () => {
        await create({ [idProp]: 0, name: 'Zero' })
        expect(await store.patch('0', { age: 1 }, q())).toEqual([{ [idProp]: 0, name: 'Zero', age: 1 }])
      })
    })

    describe('remove', () => {
      it('removes the record and returns it (.remove)', async () => {
        expect(await store.remove(idOf(doug), q())).toEqual([{ [idProp]: idOf(doug), name: 'Doug', age: 32, created: true }])
        expect(await store.get(idOf(doug), q())).toBeNull()
        expect(await store.count(q().filter)).toBe(2)
      })

      it('returns only the $select fields and the id (.remove + $select)', async () => {
        const records = await store.remove(idOf(doug), q({ $select: ['name'] }))
        expect(records).toEqual([{ [idProp]: idOf(doug), name: 'Doug' }])
        expect(records[0]).not.toHaveProperty('age')
      })

      it('removes nothing when the record does not match the query (.remove + id + query)', async () => {
        expect(await store.remove(idOf(doug), q({ name: 'Tester' }))).toEqual([])
        expect(await store.get(idOf(doug), q())).not.toBeNull()
      })

      it('removes nothing for an unknown string id (.remove + NotFound)', async () => {
        expect(await store.remove('568225fbfe21222432e836ff', q())).toEqual([])
        expect(await store.count(q().filter)).toBe(3)
      })

      it('removes nothing for an unknown numeric id (.remove + NotFound (integer))', async () => {
        expect(await store.remove(123456789, q())).toEqual([])
        expect(await store.count(q().filter)).toBe(3)
      })

      it('removes every match when the id is null (.remove + multi)', async () => {
        const records = await store.remove(null, q({ created: true }))
        expect(nameSet(records)).toEqual(['Alice', 'Doug'])
        expect(names(await findAll())).toEqual(['Bob'])
      })

      it('is not limited by $limit when the id is null (.remove + multi no pagination)', async () => {
        expect(await store.remove(null, q({ $limit: 1 }))).toHaveLength(3)
        expect(await store.find(q())).toEqual([])
      })

      it('removes nothing when the query names another id (.remove + id + query id)', async () => {
        expect(await store.remove(idOf(doug), q({ [idProp]: idOf(alice) }))).toEqual([])
        expect(await store.count(q().filter)).toBe(3)
      })

      it('returns an empty list when nothing matches the id null query', async () => {
        expect(await store.remove(null, q({ name: 'Nobody' }))).toEqual([])
        expect(await store.count(q().filter)).toBe(3)
      })

      it('projects every removed record with $select when the id is null', async () => {
        const records = await store.remove(null, q({ $select: ['name'] }))
        expect(records).toHaveLength(3)
        for (const record of records) expect(Object.keys(record).sort()).toEqual(['name', idProp].sort())
      })

      it('removes a numeric id given as a numeric string', async () => {
        await create({ [idProp]: 0, name: 'Zero' })
        expect(await store.remove('0', q())).toEqual([{ [idProp]: 0, name: 'Zero' }])
        expect(await store.get(0, q())).toBeNull()
      })
    })

    describe('copies', () => {
      it('returns find results that do not share references with the store', async () => {
        await create({ name: 'Nested', tags: ['x'] })
        const [found] = await store.find(q({ name: 'Nested' }))
        found!.name = 'Changed'
        ;(found!.tags as string[]).push('y')
        expect(await store.find(q({ name: 'Nested' }))).toEqual([expect.objectContaining({ name: 'Nested', tags: ['x'] })])
      })

      it('returns get, create, update, patch and remove results that do not share references with the store', async () => {
        const created = await create({ name: 'Orig' })
        created.name = 'FromCreate'
        const got = await store.get(idOf(created), q())
        got!.name = 'FromGet'
        const updated = await store.update(idOf(created), { name: 'Orig' }, q())
        updated!.name = 'FromUpdate'
        const [patched] = await store.patch(idOf(created), { age: 1 }, q())
        patched!.name = 'FromPatch'
        expect(await store.get(idOf(created), q())).toEqual({ [idProp]: idOf(created), name: 'Orig', age: 1 })
        const [removed] = await store.remove(idOf(created), q())
        removed!.name = 'FromRemove'
        expect(await store.get(idOf(created), q())).toBeNull()
      })

      it('is not affected by later changes to update or patch data', async () => {
        const updateData: Data = { name: 'Updated', tags: ['u'] }
        await store.update(idOf(bob), updateData, q())
        ;(updateData.tags as string[]).push('later')
        const patchData: Data = { extra: { level: 1 } }
        await store.patch(idOf(bob), patchData, q())
        ;(patchData.extra as Data).level = 2
        expect(await store.get(idOf(bob), q())).toEqual({ [idProp]: idOf(bob), name: 'Updated', tags: ['u'], extra: { level: 1 } })
      })
    })
  })
}
