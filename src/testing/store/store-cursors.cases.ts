import { AdapterService } from '../../application/adapter-service.js'
import { parseQuery } from '../../domain/query/parse-query.js'
import type { JsonSchemaObject } from '../../domain/schema/json-schema.js'
import type { CursorPage, Data, Query } from '../../domain/service/service.js'
import type { StoreIndex } from '../../domain/store/store-factory.js'
import type { ContractTools } from '../contract.js'
import type { StoreContractOptions } from './store.contract.js'

/**
 * The `cursors` group of the Store contract (store.contract.ts). Keyset pages are the records
 * beyond a cursor's position (src/domain/query/cursor.ts): chains of equality and ranges on the sort
 * keys and the id, with null and missing values ranked first. A store must answer them in its own
 * sort order, so that walking every page, in either direction, with ties, nulls and missing values,
 * with or without an index on the sort keys, and with records inserted and removed between pages,
 * shows every record exactly once.
 */
export function cursorCases(
  { group, test, beforeAll, afterAll, expect }: ContractTools,
  idProp: string,
  openStore: StoreContractOptions['open']
): void {
  const closers: (() => Promise<void>)[] = []
  const open = async (name: string, indexes?: StoreIndex[], schema?: JsonSchemaObject): Promise<AdapterService> => {
    const fixture = await openStore({ id: idProp, name: `${name}_${idProp}`, watch: false, indexes, schema })
    closers.push(async () => fixture.close?.())
    await fixture.store.remove(null, parseQuery({}))
    return new AdapterService(fixture.store, { paginate: { default: 3, max: 100 }, multi: true })
  }
  afterAll(async () => {
    for (const close of closers.splice(0)) await close()
  })
  const names = (records: Data[]): string[] => records.map((record) => String(record.name))
  const page = async (service: AdapterService, query: Query): Promise<CursorPage<Data>> =>
    (await service.find({ query })) as CursorPage<Data>

  /** Every page from the start (`$after`) or from the end (`$before`), as names in sort order. */
  async function walk(service: AdapterService, query: Query, backward = false): Promise<string[][]> {
    const pages: string[][] = []
    let cursor: string | null = ''
    while (cursor !== null && pages.length < 50) {
      const found: CursorPage<Data> = await page(service, { ...query, [backward ? '$before' : '$after']: cursor })
      pages.push(names(found.data))
      cursor = backward ? found.prev : found.next
    }
    return backward ? pages.reverse() : pages
  }

  const records: Data[] = [
    { name: 'r01', rank: 3, team: 'a' },
    { name: 'r02', rank: 1, team: 'b' },
    { name: 'r03', rank: 3, team: 'a' },
    { name: 'r04', rank: null, team: 'a' },
    { name: 'r05', team: 'b' },
    { name: 'r06', rank: 2, team: 'a' },
    { name: 'r07', rank: 3, team: 'b' },
    { name: 'r08', rank: 5, team: 'a' },
    { name: 'r09', rank: 1, team: 'a' },
    { name: 'r10', rank: 4, team: 'b' },
    { name: 'r11', rank: 3, team: 'a' }
  ]
  const sorts: Record<string, number>[] = [{}, { rank: 1 }, { rank: -1 }, { rank: 1, name: -1 }, { team: -1, rank: 1 }]

  for (const [label, indexes] of [
    ['without indexes', undefined],
    ['with an index on the sort keys', [{ fields: ['rank'] }, { fields: ['team', 'rank'] }]]
  ] as const) {
    group(`cursor pages ${label}`, () => {
      let service: AdapterService
      beforeAll(async () => {
        service = await open(indexes ? 'cursors_indexed' : 'cursors_plain', indexes ? [...indexes] : undefined)
        await service.create(records)
      })

      for (const sort of sorts) {
        test(`walk every record once, forward and backward ($sort ${JSON.stringify(sort)})`, async () => {
          const all = (await service.find({
            query: { $sort: { ...sort, [idProp]: 1 }, $limit: 100 }
          })) as CursorPage<Data>
          const expected = names(all.data)
          const forward = await walk(service, { $sort: sort })
          expect(forward.flat()).toEqual(expected)
          expect(forward.slice(0, -1).every((names) => names.length === 3)).toBe(true)
          expect((await walk(service, { $sort: sort }, true)).flat()).toEqual(expected)
        })
      }

      test('walk the records a filter selects', async () => {
        const expected = ['r09', 'r06', 'r01', 'r03', 'r11', 'r08']
        expect((await walk(service, { team: 'a', rank: { $gte: 1 }, $sort: { rank: 1, name: 1 } })).flat()).toEqual(
          expected
        )
      })

      test('count every match with total, or leave it out with $count: false', async () => {
        const first = await page(service, { team: 'a', $after: '', $sort: { rank: 1 } })
        expect(first.total).toBe(7)
        const second = await page(service, { team: 'a', $after: first.next, $sort: { rank: 1 }, $count: false })
        expect(second).not.toHaveProperty('total')
        expect(second.data).toHaveLength(3)
      })

      test('go back with prev to the page before', async () => {
        const first = await page(service, { $sort: { rank: -1 }, $after: '' })
        expect(first.prev).toBeNull()
        const second = await page(service, { $sort: { rank: -1 }, $after: first.next })
        const back = await page(service, { $sort: { rank: -1 }, $before: second.prev })
        expect(names(back.data)).toEqual(names(first.data))
        expect(back.prev).toBeNull()
      })
    })
  }

  group('cursor pages on keys the schema declares present and not null', () => {
    // A store may read such keys through an index in either direction (the null branch of a descending
    // bound matches nothing); the pages must still be the plain store's.
    const schema: JsonSchemaObject = {
      type: 'object',
      required: ['name', 'rank', 'team'],
      properties: {
        [idProp]: { type: 'integer' },
        name: { type: 'string' },
        rank: { type: 'number' },
        team: { type: 'string' }
      }
    }
    // Ids are given, so that they order ties the same way in both stores.
    const typed: Data[] = Array.from({ length: 23 }, (_, n) => ({
      [idProp]: (n * 11) % 23,
      name: `t${String(n).padStart(2, '0')}`,
      rank: (n * 7) % 5,
      team: n % 3 === 0 ? 'a' : 'b'
    }))
    let services: [AdapterService, AdapterService]
    beforeAll(async () => {
      services = [
        await open('cursors_typed_plain'),
        await open(
          'cursors_typed_indexed',
          [{ fields: ['rank'] }, { fields: ['team', 'rank'] }, { fields: ['rank', idProp] }],
          schema
        )
      ]
      for (const service of services) await service.create(typed)
    })
    // The last two walk exactly the keys of the index on rank and the id.
    const typedSorts: Record<string, number>[] = [
      { rank: -1 },
      { rank: -1, name: -1 },
      { team: -1, rank: -1 },
      { rank: 1 },
      { rank: -1, [idProp]: -1 }
    ]
    for (const sort of typedSorts) {
      test(`walk the same pages with and without the schema and indexes ($sort ${JSON.stringify(sort)})`, async () => {
        const [plain, indexed] = services
        const expected = await walk(plain, { $sort: sort, $limit: 4 })
        expect(expected.flat()).toHaveLength(typed.length)
        expect(await walk(indexed, { $sort: sort, $limit: 4 })).toEqual(expected)
        expect(await walk(indexed, { $sort: sort, $limit: 4 }, true)).toEqual(
          await walk(plain, { $sort: sort, $limit: 4 }, true)
        )
        expect(await walk(indexed, { team: 'b', $sort: sort, $limit: 4 })).toEqual(
          await walk(plain, { team: 'b', $sort: sort, $limit: 4 })
        )
      })
    }
  })

  group('cursor pages while records come and go', () => {
    test('show every record that stays exactly once, and none after its removal', async () => {
      const service = await open('cursors_moving')
      const label = (n: number) => `m${String(n).padStart(2, '0')}`
      await service.create(Array.from({ length: 20 }, (_, n) => ({ name: label(n), rank: n })))
      const seen: string[] = []
      const gone = new Set<string>()
      const added: string[] = []
      let cursor: string | null = ''
      for (let round = 0; cursor !== null && round < 30; round++) {
        const found: CursorPage<Data> = await page(service, { $sort: { rank: 1 }, $limit: 4, $after: cursor })
        for (const name of names(found.data)) expect(gone.has(name) ? `${name} (removed)` : name).toBe(name)
        seen.push(...names(found.data))
        cursor = found.next
        if (cursor === null) break
        const last = Number(found.data.at(-1)!.rank)
        // One record before the position (never shown), one right after it (shown next), and removals of a
        // record not shown yet and of one already shown.
        await service.create([
          { name: `early${round}`, rank: last - 0.5 },
          { name: `late${round}`, rank: last + 0.25 }
        ])
        added.push(`late${round}`)
        for (const name of [label(round + 6), seen[round]!]) {
          await service.remove(null, { query: { name } })
          gone.add(name)
        }
      }
      expect(new Set(seen).size).toBe(seen.length)
      for (let n = 0; n < 20; n++) if (!gone.has(label(n))) expect(seen).toContain(label(n))
      expect(seen.filter((name) => name.startsWith('early'))).toEqual([])
      expect(seen.filter((name) => name.startsWith('late'))).toEqual(added)
    })
  })
}
