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
})
