import { jest } from '@jest/globals'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { StoreQuery } from '../../../src/domain/query/ast.js'
import type { Data, Id } from '../../../src/domain/service/service.js'
import type { StoreChange } from '../../../src/domain/store/store.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'

// The Store contract, the live members' included, runs on this adapter from the kit: memory.contract.test.ts. Here:
// what the memory store adds to it.

const q = (raw: Record<string, unknown> = {}): StoreQuery => parseQuery(raw, { operators: ['$search', '$contains'] })
const idOf = (record: Data | null | undefined): Id => record?.id as Id

describe('InMemoryStore', () => {
  describe('watch stream', () => {
    let store: InMemoryStore
    let changes: StoreChange[]

    beforeEach(() => {
      store = new InMemoryStore({ watch: true })
      changes = []
      store.watch!((change) => changes.push(change))
    })

    it('has no watch method unless constructed with watch: true', () => {
      expect(new InMemoryStore().watch).toBeUndefined()
      expect(new InMemoryStore({ watch: false }).watch).toBeUndefined()
      expect(typeof store.watch).toBe('function')
    })

    it('publishes one created change per record, in input order', async () => {
      const created = await store.create([{ name: 'Ann' }, { name: 'Bob' }], q())
      expect(changes).toEqual([
        { event: 'created', record: created[0] },
        { event: 'created', record: created[1] }
      ])
    })

    it('publishes copies: listeners and callers cannot change each other or the store', async () => {
      const [ann] = await store.create([{ name: 'Ann', tags: ['x'] }], q())
      const published = changes[0]!.record
      ;(published.tags as string[]).push('from-listener')
      published.name = 'Listener'
      ann!.name = 'Caller'
      expect(await store.get(idOf(ann), q())).toEqual({ id: idOf(ann), name: 'Ann', tags: ['x'] })
      expect(published.name).toBe('Listener')
    })

    it('gives every listener its own copy', async () => {
      const other: StoreChange[] = []
      store.watch!((change) => other.push(change))
      await store.create([{ name: 'Ann' }], q())
      expect(other[0]!.record).toEqual(changes[0]!.record)
      expect(other[0]!.record).not.toBe(changes[0]!.record)
    })
  })

  describe('copies and data integrity', () => {
    let store: InMemoryStore

    beforeEach(() => {
      store = new InMemoryStore()
    })

    it('deep-copies nested input on create, update and patch', async () => {
      const input: Data = { name: 'Ann', address: { city: 'Rome', tags: ['a'] } }
      const [ann] = await store.create([input], q())
      ;((input.address as Data).tags as string[]).push('b')
      ;(input.address as Data).city = 'Paris'
      expect((await store.get(idOf(ann), q()))?.address).toEqual({ city: 'Rome', tags: ['a'] })

      const update: Data = { name: 'Ann', address: { city: 'Milan' } }
      await store.update(idOf(ann), update, q())
      ;(update.address as Data).city = 'Turin'
      const patch: Data = { meta: { level: [1] } }
      await store.patch(idOf(ann), patch, q())
      ;((patch.meta as Data).level as number[]).push(2)
      expect(await store.get(idOf(ann), q())).toEqual({
        id: idOf(ann),
        name: 'Ann',
        address: { city: 'Milan' },
        meta: { level: [1] }
      })
    })

    it('deep-copies nested output of every method', async () => {
      const nested = (): Data => ({ address: { city: 'Rome' }, tags: ['a'] })
      const [created] = await store.create([{ name: 'Ann', ...nested() }], q())
      const mutate = (record: Data | null | undefined): void => {
        ;(record!.address as Data).city = 'Changed'
        ;(record!.tags as string[]).push('changed')
      }
      mutate(created)
      mutate(await store.get(idOf(created), q()))
      mutate((await store.find(q()))[0])
      mutate((await store.page(q()))['data'][0])
      mutate((await store.find(q({ $select: ['address', 'tags'] })))[0])
      mutate(await store.update(idOf(created), { name: 'Ann', ...nested() }, q()))
      mutate((await store.patch(idOf(created), { age: 1 }, q()))[0])
      mutate((await store.patch(null, { age: 2 }, q({ $select: ['address', 'tags'] })))[0])
      expect(await store.get(idOf(created), q())).toEqual({ id: idOf(created), name: 'Ann', age: 2, ...nested() })
      const [removed] = await store.remove(idOf(created), q())
      expect(removed).toEqual({ id: idOf(created), name: 'Ann', age: 2, ...nested() })
    })

    it('keeps a JSON "__proto__" key from becoming the prototype of a stored record', async () => {
      const body = JSON.parse('{"name":"Mallory","__proto__":{"isAdmin":true}}') as Data
      const [created] = await store.create([body], q())
      expect(Object.getPrototypeOf(created)).toBe(Object.prototype)
      expect(created!.isAdmin).toBeUndefined()
      expect(await store.find(q({ isAdmin: true }))).toEqual([])
      expect(await store.count(q({ isAdmin: { $ne: null } }).filter)).toBe(0)
    })

    it('generates ids that skip ids already taken', async () => {
      await store.create(
        [
          { id: 0, name: 'Zero' },
          { id: 1, name: 'One' }
        ],
        q()
      )
      const [generated] = await store.create([{ name: 'New' }], q())
      expect([0, 1]).not.toContain(generated!.id)
      expect(await store.count(q().filter)).toBe(3)
    })

    it('rejects a duplicate id with Conflict and creates nothing from that call', async () => {
      await store.create([{ id: 'taken', name: 'First' }], q())
      await expect(store.create([{ id: 'fresh' }, { id: 'taken' }], q())).rejects.toMatchObject({
        name: 'Conflict',
        code: 409
      })
      await expect(store.create([{ id: 'twice' }, { id: 'twice' }], q())).rejects.toMatchObject({ name: 'Conflict' })
      expect((await store.find(q())).map(idOf)).toEqual(['taken'])
    })

    it('rejects an invalid $search pattern with BadRequest', async () => {
      await store.create([{ name: 'Ann' }], q())
      await expect(store.find(q({ name: { $search: '(' } }))).rejects.toMatchObject({ name: 'BadRequest', code: 400 })
    })
  })

  describe('finds by id without a scan', () => {
    const named = (records: Data[]) => records.map((record) => record.name)

    it('answers an id $in of few records in insertion order, as a scan would, after removals and updates', async () => {
      const store = new InMemoryStore()
      const made = await store.create(
        Array.from({ length: 40 }, (_, n) => ({ name: `r${n}`, even: n % 2 === 0 })),
        q()
      )
      await store.remove(idOf(made[3]), q())
      await store.update(idOf(made[7]), { name: 'r7 again' }, q())
      const [late] = await store.create([{ name: 'late', id: 1000 }], q())
      const ids = [1000, idOf(made[9]), idOf(made[3]), idOf(made[7]), idOf(made[1]), idOf(made[9])]
      expect(named(await store.find(q({ id: { $in: ids } })))).toEqual(['r1', 'r7 again', 'r9', 'late'])
      // The rest of the filter still applies, and a page counts only the matches.
      const page = await store.page(q({ id: { $in: ids }, even: false, $limit: 2 }))
      expect(page.total).toBe(2)
      expect(named(page.data)).toEqual(['r1', 'r9'])
      expect(await store.count(q({ id: { $in: ids } }).filter)).toBe(4)
      expect(named(await store.find(q({ id: late!.id, $sort: { name: -1 } })))).toEqual(['late'])
      // A sort still sorts; ids of another type do not match (the filter compares strictly, as a scan does).
      expect(named(await store.find(q({ id: { $in: ids }, $sort: { name: -1 } })))).toEqual([
        'r9',
        'r7 again',
        'r1',
        'late'
      ])
      expect(await store.find(q({ id: { $in: ['1000', String(idOf(made[1]))] } }))).toEqual([])
    })

    it('does not walk the records (a find on another field does)', async () => {
      const store = new InMemoryStore()
      const made = await store.create(
        Array.from({ length: 100 }, (_, n) => ({ name: `r${n}` })),
        q()
      )
      // The store's records are the only Map of 100 entries here: which finds iterate it?
      const walks = async (query: StoreQuery) => {
        const spy = jest.spyOn(Map.prototype, 'values')
        try {
          await store.find(query)
          return spy.mock.contexts.some((map) => (map as Map<unknown, unknown>).size === 100)
        } finally {
          spy.mockRestore()
        }
      }
      expect(await walks(q({ id: { $in: [idOf(made[50]), idOf(made[5])] } }))).toBe(false)
      expect(await walks(q({ id: idOf(made[5]) }))).toBe(false)
      expect(await walks(q({ name: 'r5' }))).toBe(true)
      // Names a quarter of the records or more: a scan is as cheap.
      expect(await walks(q({ id: { $in: made.slice(0, 30).map(idOf) } }))).toBe(true)
    })
  })
})
