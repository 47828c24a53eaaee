import type { Data } from '../../domain/service/service.js'
import type { Store } from '../../domain/store/store.js'
import type { ContractTools } from '../contract.js'
import type { StoreContext } from './store-context.js'

/**
 * Operators, $search, $contains, page and count: cases of the `queries` group of the Store contract
 * (store.contract.ts), which seeds Alice, Bob and Doug before each case.
 */
export function queryCases({ group, test, beforeEach, expect }: ContractTools, context: StoreContext): void {
  let store: Store, bob: Data, doug: Data
  beforeEach(() => ({ store, bob, doug } = context.state()))
  const { q, idOf, names, nameSet, create, idProp } = context

  group('operators', () => {
    test('matches any listed value with $in (.find + $in)', async () => {
      expect(names(await store.find(q({ name: { $in: ['Alice', 'Bob'] }, $sort: { name: 1 } })))).toEqual([
        'Alice',
        'Bob'
      ])
    })

    test('matches nothing with an empty $in', async () => {
      expect(await store.find(q({ name: { $in: [] } }))).toEqual([])
    })

    test('matches none of the listed values with $nin (.find + $nin)', async () => {
      expect(names(await store.find(q({ name: { $nin: ['Alice', 'Bob'] } })))).toEqual(['Doug'])
    })

    test('matches everything with an empty $nin', async () => {
      expect(await store.find(q({ name: { $nin: [] } }))).toHaveLength(3)
    })

    test('filters with $lt (.find + $lt)', async () => {
      expect(nameSet(await store.find(q({ age: { $lt: 30 } })))).toEqual(['Alice', 'Bob'])
    })

    test('filters with $lte (.find + $lte)', async () => {
      expect(nameSet(await store.find(q({ age: { $lte: 25 } })))).toEqual(['Alice', 'Bob'])
    })

    test('filters with $gt (.find + $gt)', async () => {
      expect(names(await store.find(q({ age: { $gt: 30 } })))).toEqual(['Doug'])
    })

    test('filters with $gte (.find + $gte)', async () => {
      expect(nameSet(await store.find(q({ age: { $gte: 25 } })))).toEqual(['Bob', 'Doug'])
    })

    test('filters with $ne (.find + $ne)', async () => {
      expect(nameSet(await store.find(q({ age: { $ne: 25 } })))).toEqual(['Alice', 'Doug'])
    })

    test('combines operators on one field (.find + $gt + $lt + $sort)', async () => {
      expect(names(await store.find(q({ age: { $gt: 18, $lt: 30 }, $sort: { name: 1 } })))).toEqual(['Alice', 'Bob'])
    })

    test('compares strings with range operators', async () => {
      expect(nameSet(await store.find(q({ name: { $gte: 'B' } })))).toEqual(['Bob', 'Doug'])
    })

    test('compares only values of the same type with range operators', async () => {
      await store.create(
        [
          { name: 'NumFive', n: 5 },
          { name: 'TextFive', n: '5' }
        ],
        q()
      )
      expect(names(await store.find(q({ n: { $lt: 10 } })))).toEqual(['NumFive'])
      expect(names(await store.find(q({ n: { $gt: 1 } })))).toEqual(['NumFive'])
      expect(names(await store.find(q({ n: { $lt: '9' } })))).toEqual(['TextFive'])
      expect(names(await store.find(q({ n: { $gte: '0' } })))).toEqual(['TextFive'])
    })

    test('matches any criteria with $or (.find + $or)', async () => {
      expect(names(await store.find(q({ $or: [{ name: 'Alice' }, { name: 'Bob' }], $sort: { name: 1 } })))).toEqual([
        'Alice',
        'Bob'
      ])
    })

    test('matches operators inside $or (.find + $or nested + $sort)', async () => {
      const records = await store.find(
        q({ $or: [{ name: 'Doug' }, { age: { $gte: 18, $lt: 25 } }], $sort: { name: 1 } })
      )
      expect(names(records)).toEqual(['Alice', 'Doug'])
    })

    test('matches $or nested in $or', async () => {
      expect(
        nameSet(await store.find(q({ $or: [{ $or: [{ name: 'Alice' }, { age: 32 }] }, { name: 'Nobody' }] })))
      ).toEqual(['Alice', 'Doug'])
    })

    test('requires every criteria with $and (.find + $and)', async () => {
      expect(
        names(await store.find(q({ $and: [{ age: { $gt: 18 } }, { age: { $lt: 30 } }], $sort: { name: 1 } })))
      ).toEqual(['Alice', 'Bob'])
      expect(await store.find(q({ $and: [{ name: 'Alice' }, { age: 25 }] }))).toEqual([])
    })

    test('combines $and with $or (.find + $and + $or)', async () => {
      const records = await store.find(
        q({ $and: [{ $or: [{ name: 'Alice' }, { name: 'Doug' }] }, { age: { $gt: 20 } }] })
      )
      expect(names(records)).toEqual(['Doug'])
    })

    test('combines $or with field criteria at the top level', async () => {
      expect(names(await store.find(q({ created: true, $or: [{ name: 'Bob' }, { age: 19 }] })))).toEqual(['Alice'])
    })
  })

  group('$search', () => {
    beforeEach(async () => {
      await store.create(
        [{ name: 'Ann' }, { name: 'JoANNa' }, { name: 'bAnn' }, { name: 12345 }, { name: ['Ann'] }],
        q()
      )
    })

    test('declares $search', () => {
      expect(store.operators).toContain('$search')
    })

    test('matches with an anchored RE2 pattern', async () => {
      expect(nameSet(await store.find(q({ name: { $search: '^A' } })))).toEqual(['Alice', 'Ann'])
    })

    test('matches anywhere in the string when not anchored', async () => {
      expect(nameSet(await store.find(q({ name: { $search: 'li' } })))).toEqual(['Alice'])
    })

    test('honours the RE2 (?i) flag', async () => {
      expect(nameSet(await store.find(q({ name: { $search: '(?i)ann' } })))).toEqual(['Ann', 'JoANNa', 'bAnn'])
    })

    test('never matches non-string field values', async () => {
      expect(await store.find(q({ name: { $search: '^(1|\\[)' } }))).toEqual([])
      expect(await store.find(q({ age: { $search: '1' } }))).toEqual([])
    })

    test('completes a catastrophic-backtracking pattern on a long string', async () => {
      await create({ name: 'long', text: `${'a'.repeat(50_000)}!` })
      expect(await store.find(q({ text: { $search: '(a+)+$' } }))).toEqual([])
    })
  })

  group('$contains', () => {
    beforeEach(async () => {
      await store.create(
        [
          { name: 'Tagged', tags: ['red', 'blue', 3] },
          { name: 'Other', tags: ['green'] },
          { name: 'Text', tags: 'red blue' }
        ],
        q()
      )
    })

    test('declares $contains', () => {
      expect(store.operators).toContain('$contains')
    })

    test('matches an array field that contains the value', async () => {
      expect(names(await store.find(q({ tags: { $contains: 'red' } })))).toEqual(['Tagged'])
      expect(names(await store.find(q({ tags: { $contains: 3 } })))).toEqual(['Tagged'])
    })

    test('compares the contained value with strict types', async () => {
      expect(await store.find(q({ tags: { $contains: '3' } }))).toEqual([])
    })

    test('never matches a non-array field', async () => {
      expect(await store.find(q({ tags: { $contains: 'red blue' } }))).toEqual([])
      expect(await store.find(q({ name: { $contains: 'A' } }))).toEqual([])
    })
  })

  group('page and count', () => {
    test('returns the total and the requested page (.find + paginate)', async () => {
      const page = await store.page(q({ $sort: { name: -1 }, $limit: 1 }))
      expect(page).toEqual({ total: 3, data: [{ [idProp]: idOf(doug), name: 'Doug', age: 32, created: true }] })
    })

    test('counts only the records matching the query (.find + paginate + query)', async () => {
      const page = await store.page(q({ $sort: { name: -1 }, name: 'Doug', $limit: 1 }))
      expect(page.total).toBe(1)
      expect(names(page.data)).toEqual(['Doug'])
    })

    test('counts every match before $skip and $limit (.find + paginate + $limit + $skip)', async () => {
      const page = await store.page(q({ $skip: 1, $limit: 2, $sort: { name: -1 } }))
      expect(page.total).toBe(3)
      expect(names(page.data)).toEqual(['Bob', 'Alice'])
    })

    test('returns total only when $limit is 0 (.find + paginate + $limit 0)', async () => {
      expect(await store.page(q({ $limit: 0 }))).toEqual({ total: 3, data: [] })
    })

    test('returns every match when there is no $limit', async () => {
      const page = await store.page(q({ age: { $gt: 18 } }))
      expect(page.total).toBe(3)
      expect(nameSet(page.data)).toEqual(['Alice', 'Bob', 'Doug'])
    })

    test('keeps the total when $skip passes the last match', async () => {
      expect(await store.page(q({ $skip: 10, $limit: 5 }))).toEqual({ total: 3, data: [] })
    })

    test('keeps the total when $skip passes the last match of a sorted, filtered page', async () => {
      expect(await store.page(q({ age: { $gt: 18 }, $sort: { name: 1 }, $skip: 10, $limit: 5 }))).toEqual({
        total: 3,
        data: []
      })
      expect(await store.page(q({ name: 'Nobody', $sort: { name: 1 }, $limit: 5 }))).toEqual({ total: 0, data: [] })
    })

    test('projects the page data with $select', async () => {
      const page = await store.page(q({ name: 'Bob', $select: ['age'] }))
      expect(page).toEqual({ total: 1, data: [{ [idProp]: idOf(bob), age: 25 }] })
    })

    test('counts the records matching a filter', async () => {
      expect(await store.count(q().filter)).toBe(3)
      expect(await store.count(q({ created: true }).filter)).toBe(2)
      expect(await store.count(q({ name: 'Nobody' }).filter)).toBe(0)
    })
  })
}
