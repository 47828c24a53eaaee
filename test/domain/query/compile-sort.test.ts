import { compareValues, compileSort } from '../../../src/domain/query/compile-sort.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'

const sorted = (records: Doc[], sort: Parameters<typeof compileSort>[0]): unknown[] =>
  [...records].sort(compileSort(sort)).map((record) => record.name)

describe('compareValues', () => {
  it('orders mixed types null/missing < numbers < strings < booleans < dates < arrays < objects', () => {
    const values = [{ a: 1 }, [0], new Date(0), true, 'a', 10, null]
    const shuffled = [values[3], values[0], values[6], values[2], values[5], values[1], values[4]]
    expect(shuffled.sort(compareValues)).toEqual(values.reverse())
    expect(compareValues(undefined, null)).toBe(0)
    expect(compareValues(undefined, -1)).toBeLessThan(0)
  })

  it('orders numbers numerically and strings by UTF-16 code unit (uppercase first)', () => {
    expect(compareValues(9, 10)).toBeLessThan(0)
    expect(compareValues('10', '9')).toBeLessThan(0)
    expect(compareValues('B', 'a')).toBeLessThan(0)
    expect(compareValues(false, true)).toBeLessThan(0)
    expect(compareValues(new Date(2), new Date(1))).toBeGreaterThan(0)
  })

  it('compares two arrays, or two objects, as equal', () => {
    expect(compareValues([2], [1])).toBe(0)
    expect(compareValues({ a: 2 }, { a: 1 })).toBe(0)
  })
})

describe('compileSort', () => {
  const people: Doc[] = [
    { name: 'Cid', age: 30, address: { city: 'Oslo' } },
    { name: 'Ann', age: 20, address: { city: 'Rome' } },
    { name: 'Bob', age: 30 },
    { name: 'Dan', age: null, address: 'Lima' },
    { name: 'Eve', age: '30', address: { city: 'Athens' } }
  ]

  it('puts null and missing first ascending and last descending', () => {
    expect(sorted(people, [['age', 1]])).toEqual(['Dan', 'Ann', 'Cid', 'Bob', 'Eve'])
    expect(sorted(people, [['age', -1]])).toEqual(['Eve', 'Cid', 'Bob', 'Ann', 'Dan'])
  })

  it("keeps the input order of ties (the store's order)", () => {
    expect(sorted(people, [['age', 1]]).slice(2, 4)).toEqual(['Cid', 'Bob'])
    expect(sorted([...people].reverse(), [['age', 1]]).slice(2, 4)).toEqual(['Bob', 'Cid'])
  })

  it('gives the first key priority and applies each direction to its own key', () => {
    expect(
      sorted(people, [
        ['age', -1],
        ['name', 1]
      ])
    ).toEqual(['Eve', 'Bob', 'Cid', 'Ann', 'Dan'])
    expect(
      sorted(people, [
        ['age', 1],
        ['name', -1]
      ])
    ).toEqual(['Dan', 'Ann', 'Cid', 'Bob', 'Eve'])
  })

  it('sorts by nested fields, reading paths through non-objects as missing', () => {
    expect(
      sorted(people, [
        ['address.city', 1],
        ['name', 1]
      ])
    ).toEqual(['Bob', 'Dan', 'Eve', 'Cid', 'Ann'])
  })

  it('compares nothing without keys', () => {
    expect(compileSort([])(people[0]!, people[1]!)).toBe(0)
  })
})
