import type { Data } from '../../domain/service/service.js'
import type { Store } from '../../domain/store/store.js'
import type { ContractTools } from '../contract.js'
import type { StoreContext } from './store-context.js'

/**
 * create, update, patch, remove and copies: the `writes` group of the Store contract (store.contract.ts), which seeds
 * Alice, Bob and Doug before each case.
 */
export function writeCases({ group, test, beforeEach, expect }: ContractTools, context: StoreContext): void {
  let store: Store, alice: Data, bob: Data, doug: Data
  beforeEach(() => ({ store, alice, bob, doug } = context.state()))
  const { q, idOf, names, nameSet, create, findAll, idProp } = context

  group('create', () => {
    test('returns the created record with a generated id and leaves the input alone (.create)', async () => {
      const input = { name: 'Bill', age: 40 }
      const [record] = await store.create([input], q())
      expect(input).toEqual({ name: 'Bill', age: 40 })
      expect(record).toEqual({ [idProp]: idOf(record), name: 'Bill', age: 40 })
      expect(await store.get(idOf(record), q())).toEqual(record)
    })

    test('creates several records in one call, in input order, with distinct ids (.create multi)', async () => {
      const records = await store.create(
        [
          { name: 'Gerald', age: 18 },
          { name: 'Herald', age: 18 },
          { name: 'Harold', age: 18 }
        ],
        q()
      )
      expect(names(records)).toEqual(['Gerald', 'Herald', 'Harold'])
      expect(new Set(records.map(idOf)).size).toBe(3)
      expect(nameSet(await store.find(q({ age: 18 })))).toEqual(['Gerald', 'Harold', 'Herald'])
    })

    test('returns only the $select fields and the id, and stores the whole record (.create + $select)', async () => {
      const [record] = await store.create([{ name: 'Bill', age: 40, created: false }], q({ $select: ['age'] }))
      expect(record).toEqual({ [idProp]: idOf(record), age: 40 })
      expect(await store.get(idOf(record), q())).toEqual({
        [idProp]: idOf(record),
        name: 'Bill',
        age: 40,
        created: false
      })
    })

    test('projects every created record with $select, in input order (.create multi + $select)', async () => {
      const records = await store.create(
        [
          { name: 'Gerald', age: 18 },
          { [idProp]: 'given', name: 'Herald' }
        ],
        q({ $select: ['name', 'missing'] })
      )
      expect(records).toEqual([
        { [idProp]: idOf(records[0]), name: 'Gerald' },
        { [idProp]: 'given', name: 'Herald' }
      ])
    })

    test('creates nothing from an empty list', async () => {
      expect(await store.create([], q())).toEqual([])
      expect(await store.count(q().filter)).toBe(3)
    })

    test('keeps an id given in the data', async () => {
      const [text, number] = await store.create(
        [
          { [idProp]: 'given', name: 'Text' },
          { [idProp]: 42, name: 'Number' }
        ],
        q()
      )
      expect(idOf(text)).toBe('given')
      expect(idOf(number)).toBe(42)
      expect(await store.get('given', q())).toEqual({ [idProp]: 'given', name: 'Text' })
      expect(await store.get(42, q())).toEqual({ [idProp]: 42, name: 'Number' })
    })

    test('stores the id under the configured field name only', async () => {
      const record = await create({ name: 'Custom' })
      expect(record[idProp]).toBeDefined()
      if (idProp !== 'id') expect(record).not.toHaveProperty('id')
    })

    test('is not affected by later changes to the input', async () => {
      const input: Data = { name: 'Mutable', tags: ['x'] }
      const record = await create(input)
      input.name = 'Changed'
      ;(input.tags as string[]).push('y')
      expect(await store.get(idOf(record), q())).toEqual({ [idProp]: idOf(record), name: 'Mutable', tags: ['x'] })
    })
  })

  group('update', () => {
    test('replaces every field but the id and leaves the input alone (.update)', async () => {
      const input = { [idProp]: idOf(doug), name: 'Dougler' }
      const record = await store.update(idOf(doug), input, q())
      expect(input).toEqual({ [idProp]: idOf(doug), name: 'Dougler' })
      expect(record).toEqual({ [idProp]: idOf(doug), name: 'Dougler' })
      expect(record).not.toHaveProperty('age')
      const stored = await store.get(idOf(doug), q())
      expect(stored).toEqual({ [idProp]: idOf(doug), name: 'Dougler' })
      expect(stored).not.toHaveProperty('created')
    })

    test('keeps the stored id when the data carries another one', async () => {
      const record = await store.update(idOf(doug), { [idProp]: 999, name: 'Dougler' }, q())
      expect(record).toEqual({ [idProp]: idOf(doug), name: 'Dougler' })
      expect(await store.get(999, q())).toBeNull()
      expect(await store.count(q().filter)).toBe(3)
    })

    test('returns only the $select fields and the id (.update + $select)', async () => {
      const record = await store.update(idOf(doug), { name: 'Dougler', age: 10 }, q({ $select: ['name'] }))
      expect(record).toEqual({ [idProp]: idOf(doug), name: 'Dougler' })
      expect(record).not.toHaveProperty('age')
      expect(await store.get(idOf(doug), q())).toMatchObject({ age: 10 })
    })

    test('returns null and changes nothing when the record does not match the query (.update + id + query)', async () => {
      expect(await store.update(idOf(doug), { name: 'Dougler' }, q({ name: 'Tester' }))).toBeNull()
      expect(await store.get(idOf(doug), q())).toMatchObject({ name: 'Doug', age: 32 })
    })

    test('returns null and creates nothing for an unknown string id (.update + NotFound)', async () => {
      expect(await store.update('568225fbfe21222432e836ff', { name: 'NotFound' }, q())).toBeNull()
      expect(await store.find(q({ name: 'NotFound' }))).toEqual([])
    })

    test('returns null for an unknown numeric id (.update + NotFound (integer))', async () => {
      expect(await store.update(123456789, { name: 'NotFound' }, q())).toBeNull()
      expect(await store.count(q().filter)).toBe(3)
    })

    test('returns null when the query excludes the record (.update + query + NotFound)', async () => {
      const dave = await create({ name: 'Dave' })
      expect(await store.update(idOf(dave), { name: 'UpdatedDave' }, q({ name: 'NotDave' }))).toBeNull()
      expect(await store.get(idOf(dave), q())).toMatchObject({ name: 'Dave' })
    })

    test('returns null when the query names another id (.update + id + query id)', async () => {
      expect(await store.update(idOf(doug), { name: 'Dougler', age: 33 }, q({ [idProp]: idOf(alice) }))).toBeNull()
      expect(await store.get(idOf(alice), q())).toMatchObject({ name: 'Alice', age: 19 })
    })

    test('updates a numeric id given as a numeric string', async () => {
      await create({ [idProp]: 0, name: 'Zero' })
      expect(await store.update('0', { name: 'Nil' }, q())).toEqual({ [idProp]: 0, name: 'Nil' })
      expect(await store.get(0, q())).toEqual({ [idProp]: 0, name: 'Nil' })
    })
  })

  group('patch', () => {
    test('merges the data into the record and leaves the input alone (.patch)', async () => {
      const input = { [idProp]: idOf(doug), name: 'PatchDoug' }
      const records = await store.patch(idOf(doug), input, q())
      expect(input).toEqual({ [idProp]: idOf(doug), name: 'PatchDoug' })
      expect(records).toEqual([{ [idProp]: idOf(doug), name: 'PatchDoug', age: 32, created: true }])
      expect(await store.get(idOf(doug), q())).toEqual(records[0])
    })

    test('never changes the id', async () => {
      const records = await store.patch(idOf(doug), { [idProp]: 999, age: 33 }, q())
      expect(idOf(records[0])).toEqual(idOf(doug))
      expect(await store.get(999, q())).toBeNull()
      expect(await store.get(idOf(doug), q())).toMatchObject({ name: 'Doug', age: 33 })
    })

    test('replaces nested objects instead of merging them deeply', async () => {
      const rita = await create({ name: 'Rita', address: { city: 'Rome', zip: '00100' } })
      await store.patch(idOf(rita), { address: { city: 'Milan' } }, q())
      expect((await store.get(idOf(rita), q()))?.address).toEqual({ city: 'Milan' })
    })

    test('stores null values', async () => {
      await store.patch(idOf(doug), { age: null }, q())
      expect(await store.get(idOf(doug), q())).toEqual({ [idProp]: idOf(doug), name: 'Doug', age: null, created: true })
    })

    test('returns only the $select fields and the id (.patch + $select)', async () => {
      const records = await store.patch(idOf(doug), { name: 'PatchDoug' }, q({ $select: ['name'] }))
      expect(records).toEqual([{ [idProp]: idOf(doug), name: 'PatchDoug' }])
      expect(records[0]).not.toHaveProperty('age')
    })

    test('patches nothing when the record does not match the query (.patch + id + query)', async () => {
      expect(await store.patch(idOf(doug), { name: 'id patched doug' }, q({ name: 'Tester' }))).toEqual([])
      expect(await store.get(idOf(doug), q())).toMatchObject({ name: 'Doug' })
    })

    test('patches every match when the id is null (.patch multiple)', async () => {
      const records = await store.patch(null, { age: 2 }, q({ created: true }))
      expect(nameSet(records)).toEqual(['Alice', 'Doug'])
      for (const record of records) expect(record.age).toBe(2)
      expect(names(await store.find(q({ age: 2, $sort: { name: 1 } })))).toEqual(['Alice', 'Doug'])
      expect(await store.get(idOf(bob), q())).toMatchObject({ age: 25 })
    })

    test('is not limited by $limit when the id is null (.patch multiple no pagination)', async () => {
      const records = await store.patch(null, { age: 2 }, q({ $limit: 1 }))
      expect(records).toHaveLength(3)
      expect(await store.count(q({ age: 2 }).filter)).toBe(3)
    })

    test('returns the patched records when the query still matches them (.patch multi query same)', async () => {
      const records = await store.patch(null, { age: 2 }, q({ age: { $lt: 30 } }))
      expect(nameSet(records)).toEqual(['Alice', 'Bob'])
      for (const record of records) expect(record.age).toBe(2)
    })

    test('returns the patched records when the patch changes the queried field (.patch multi query changed)', async () => {
      await store.create(
        [
          { name: 'Dave', age: 10 },
          { name: 'David', age: 10 }
        ],
        q()
      )
      const records = await store.patch(null, { age: 2 }, q({ age: 10 }))
      expect(nameSet(records)).toEqual(['Dave', 'David'])
      for (const record of records) expect(record.age).toBe(2)
    })

    test('returns an empty list when nothing matches the id null query', async () => {
      expect(await store.patch(null, { age: 2 }, q({ name: 'Nobody' }))).toEqual([])
    })

    test('projects every patched record with $select when the id is null', async () => {
      const records = await store.patch(null, { age: 3 }, q({ created: true, $select: ['age'] }))
      expect(records).toHaveLength(2)
      for (const record of records) expect(Object.keys(record).sort()).toEqual(['age', idProp].sort())
    })

    test('patches nothing for an unknown string id (.patch + NotFound)', async () => {
      expect(await store.patch('568225fbfe21222432e836ff', { name: 'PatchDoug' }, q())).toEqual([])
      expect(await store.count(q({ name: 'PatchDoug' }).filter)).toBe(0)
    })

    test('patches nothing for an unknown numeric id (.patch + NotFound (integer))', async () => {
      expect(await store.patch(123456789, { name: 'PatchDoug' }, q())).toEqual([])
      expect(await store.count(q().filter)).toBe(3)
    })

    test('patches nothing when the query excludes the record (.patch + query + NotFound)', async () => {
      const dave = await create({ name: 'Dave' })
      expect(await store.patch(idOf(dave), { name: 'PatchedDave' }, q({ name: 'NotDave' }))).toEqual([])
      expect(await store.get(idOf(dave), q())).toMatchObject({ name: 'Dave' })
    })

    test('patches nothing when the query names another id (.patch + id + query id)', async () => {
      expect(await store.patch(idOf(doug), { age: 33 }, q({ [idProp]: idOf(alice) }))).toEqual([])
      expect(await store.get(idOf(alice), q())).toMatchObject({ age: 19 })
      expect(await store.get(idOf(doug), q())).toMatchObject({ age: 32 })
    })

    test('patches a numeric id given as a numeric string', async () => {
      await create({ [idProp]: 0, name: 'Zero' })
      expect(await store.patch('0', { age: 1 }, q())).toEqual([{ [idProp]: 0, name: 'Zero', age: 1 }])
    })
  })

  group('remove', () => {
    test('removes the record and returns it (.remove)', async () => {
      expect(await store.remove(idOf(doug), q())).toEqual([
        { [idProp]: idOf(doug), name: 'Doug', age: 32, created: true }
      ])
      expect(await store.get(idOf(doug), q())).toBeNull()
      expect(await store.count(q().filter)).toBe(2)
    })

    test('returns only the $select fields and the id (.remove + $select)', async () => {
      const records = await store.remove(idOf(doug), q({ $select: ['name'] }))
      expect(records).toEqual([{ [idProp]: idOf(doug), name: 'Doug' }])
      expect(records[0]).not.toHaveProperty('age')
    })

    test('removes nothing when the record does not match the query (.remove + id + query)', async () => {
      expect(await store.remove(idOf(doug), q({ name: 'Tester' }))).toEqual([])
      expect(await store.get(idOf(doug), q())).not.toBeNull()
    })

    test('removes nothing for an unknown string id (.remove + NotFound)', async () => {
      expect(await store.remove('568225fbfe21222432e836ff', q())).toEqual([])
      expect(await store.count(q().filter)).toBe(3)
    })

    test('removes nothing for an unknown numeric id (.remove + NotFound (integer))', async () => {
      expect(await store.remove(123456789, q())).toEqual([])
      expect(await store.count(q().filter)).toBe(3)
    })

    test('removes every match when the id is null (.remove + multi)', async () => {
      const records = await store.remove(null, q({ created: true }))
      expect(nameSet(records)).toEqual(['Alice', 'Doug'])
      expect(names(await findAll())).toEqual(['Bob'])
    })

    test('is not limited by $limit when the id is null (.remove + multi no pagination)', async () => {
      expect(await store.remove(null, q({ $limit: 1 }))).toHaveLength(3)
      expect(await store.find(q())).toEqual([])
    })

    test('removes nothing when the query names another id (.remove + id + query id)', async () => {
      expect(await store.remove(idOf(doug), q({ [idProp]: idOf(alice) }))).toEqual([])
      expect(await store.count(q().filter)).toBe(3)
    })

    test('returns an empty list when nothing matches the id null query', async () => {
      expect(await store.remove(null, q({ name: 'Nobody' }))).toEqual([])
      expect(await store.count(q().filter)).toBe(3)
    })

    test('projects every removed record with $select when the id is null', async () => {
      const records = await store.remove(null, q({ $select: ['name'] }))
      expect(records).toHaveLength(3)
      for (const record of records) expect(Object.keys(record).sort()).toEqual(['name', idProp].sort())
    })

    test('removes a numeric id given as a numeric string', async () => {
      await create({ [idProp]: 0, name: 'Zero' })
      expect(await store.remove('0', q())).toEqual([{ [idProp]: 0, name: 'Zero' }])
      expect(await store.get(0, q())).toBeNull()
    })
  })

  group('copies', () => {
    test('returns find results that do not share references with the store', async () => {
      await create({ name: 'Nested', tags: ['x'] })
      const [found] = await store.find(q({ name: 'Nested' }))
      found!.name = 'Changed'
      ;(found!.tags as string[]).push('y')
      expect(await store.find(q({ name: 'Nested' }))).toEqual([
        expect.objectContaining({ name: 'Nested', tags: ['x'] })
      ])
    })

    test('returns get, create, update, patch and remove results that do not share references with the store', async () => {
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

    test('is not affected by later changes to update or patch data', async () => {
      const updateData: Data = { name: 'Updated', tags: ['u'] }
      await store.update(idOf(bob), updateData, q())
      ;(updateData.tags as string[]).push('later')
      const patchData: Data = { extra: { level: 1 } }
      await store.patch(idOf(bob), patchData, q())
      ;(patchData.extra as Data).level = 2
      expect(await store.get(idOf(bob), q())).toEqual({
        [idProp]: idOf(bob),
        name: 'Updated',
        tags: ['u'],
        extra: { level: 1 }
      })
    })
  })
}
