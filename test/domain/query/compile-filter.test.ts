import type { Filter } from '../../../src/domain/query/ast.js'
import { compileFilter, valuesEqual } from '../../../src/domain/query/compile-filter.js'
import { fieldGetter, type Doc } from '../../../src/domain/query/field-getter.js'

// The reference evaluator's predicates (the memory adapter runs them), one operator at a time; the Store
// contract (src/testing/store) checks the same semantics through every adapter.

const records: Doc[] = [
  { name: 'num', v: 5 },
  { name: 'text', v: '5' },
  { name: 'zero', v: 0 },
  { name: 'empty', v: '' },
  { name: 'false', v: false },
  { name: 'true', v: true },
  { name: 'null', v: null },
  { name: 'missing' },
  { name: 'array', v: [1, 'a'] },
  { name: 'object', v: { a: 1, b: [2] } }
]
/** Names of the records `filter` matches, in record order. */
const matching = (filter: Filter, pool: Doc[] = records): string[] =>
  pool
    .filter(compileFilter(filter, (pattern) => (text) => new RegExp(pattern).test(text)))
    .map((record) => String(record.name))

describe('fieldGetter', () => {
  it('reads own properties only', () => {
    const get = fieldGetter('toString')
    expect(get({})).toBeUndefined()
    expect(get({ toString: 1 })).toBe(1)
    expect(fieldGetter('constructor')({ a: 1 })).toBeUndefined()
  })

  it('follows a dotted name into nested objects, and reads missing through anything else', () => {
    const city = fieldGetter('address.city')
    expect(city({ address: { city: 'Rome' } })).toBe('Rome')
    expect(city({ address: { town: 'Rome' } })).toBeUndefined()
    expect(city({ address: 'Rome' })).toBeUndefined()
    expect(city({ address: null })).toBeUndefined()
    expect(city({})).toBeUndefined()
    expect(fieldGetter('a.b.c')({ a: { b: { c: false } } })).toBe(false)
  })

  it('never enters an array', () => {
    expect(fieldGetter('tags.0')({ tags: ['red'] })).toBeUndefined()
    expect(fieldGetter('tags.length')({ tags: ['red'] })).toBeUndefined()
  })
})

describe('compileFilter', () => {
  it('matches null and missing fields, and nothing falsy, with equality to null', () => {
    expect(matching({ op: 'eq', field: 'v', value: null })).toEqual(['null', 'missing'])
    expect(matching({ op: 'ne', field: 'v', value: null })).toEqual([
      'num',
      'text',
      'zero',
      'empty',
      'false',
      'true',
      'array',
      'object'
    ])
  })

  it('compares scalars with strict types', () => {
    expect(matching({ op: 'eq', field: 'v', value: 5 })).toEqual(['num'])
    expect(matching({ op: 'eq', field: 'v', value: '5' })).toEqual(['text'])
    expect(matching({ op: 'eq', field: 'v', value: false })).toEqual(['false'])
    expect(matching({ op: 'ne', field: 'v', value: 5 })).toEqual(
      records.map((record) => record.name).filter((name) => name !== 'num')
    )
  })

  it('compares arrays and objects deeply: array order counts, key order does not', () => {
    expect(matching({ op: 'eq', field: 'v', value: [1, 'a'] })).toEqual(['array'])
    expect(matching({ op: 'eq', field: 'v', value: ['a', 1] })).toEqual([])
    expect(matching({ op: 'eq', field: 'v', value: { b: [2], a: 1 } })).toEqual(['object'])
    expect(matching({ op: 'eq', field: 'v', value: { a: 1 } })).toEqual([])
    expect(matching({ op: 'ne', field: 'v', value: { a: 1, b: [2] } })).not.toContain('object')
  })

  it("compares only values of the bound's type with range operators", () => {
    expect(matching({ op: 'gte', field: 'v', value: 0 })).toEqual(['num', 'zero'])
    expect(matching({ op: 'lt', field: 'v', value: 10 })).toEqual(['num', 'zero'])
    expect(matching({ op: 'lt', field: 'v', value: '9' })).toEqual(['text', 'empty'])
    expect(matching({ op: 'gt', field: 'v', value: '' })).toEqual(['text'])
    expect(matching({ op: 'gt', field: 'v', value: false })).toEqual(['true'])
    expect(matching({ op: 'lte', field: 'v', value: true })).toEqual(['false', 'true'])
  })

  it('matches nothing with a null range bound, and never a null or missing field', () => {
    for (const op of ['lt', 'lte', 'gt', 'gte'] as const) expect(matching({ op, field: 'v', value: null })).toEqual([])
    expect(matching({ op: 'lte', field: 'v', value: 'zzz' })).not.toContain('null')
    expect(matching({ op: 'gte', field: 'v', value: -Infinity })).not.toContain('missing')
  })

  it('matches $in members by strict and deep equality, null matching missing', () => {
    expect(matching({ op: 'in', field: 'v', values: [5, 'x', { a: 1, b: [2] }] })).toEqual(['num', 'object'])
    expect(matching({ op: 'in', field: 'v', values: [null] })).toEqual(['null', 'missing'])
    expect(matching({ op: 'in', field: 'v', values: [] })).toEqual([])
    expect(matching({ op: 'nin', field: 'v', values: [] })).toHaveLength(records.length)
    expect(matching({ op: 'nin', field: 'v', values: [null, 0, '', false, true, 5, '5', [1, 'a']] })).toEqual([
      'object'
    ])
  })

  it('matches $contains on array fields only, by deep equality', () => {
    const pool: Doc[] = [{ name: 'tags', v: ['red', { k: 1 }, 3] }, { name: 'text', v: 'red' }, { name: 'none' }]
    expect(matching({ op: 'contains', field: 'v', value: 'red' }, pool)).toEqual(['tags'])
    expect(matching({ op: 'contains', field: 'v', value: { k: 1 } }, pool)).toEqual(['tags'])
    expect(matching({ op: 'contains', field: 'v', value: '3' }, pool)).toEqual([])
  })

  it('matches $search on string fields only, and needs a pattern engine', () => {
    expect(matching({ op: 'search', field: 'v', pattern: '^5$' })).toEqual(['text'])
    expect(() => compileFilter({ op: 'search', field: 'v', pattern: 'x' })).toThrow(/no pattern engine/)
  })

  it('reads dotted fields as paths for every operator', () => {
    const pool: Doc[] = [
      { name: 'rome', address: { city: 'Rome', zip: 100 } },
      { name: 'flat', address: 'Rome' },
      { name: 'none' }
    ]
    expect(matching({ op: 'eq', field: 'address.city', value: 'Rome' }, pool)).toEqual(['rome'])
    expect(matching({ op: 'eq', field: 'address.city', value: null }, pool)).toEqual(['flat', 'none'])
    expect(matching({ op: 'gt', field: 'address.zip', value: 50 }, pool)).toEqual(['rome'])
  })

  it('combines with and/or: an empty and matches all, an empty or matches none', () => {
    expect(matching({ op: 'and', filters: [] })).toHaveLength(records.length)
    expect(matching({ op: 'or', filters: [] })).toEqual([])
    const filter: Filter = {
      op: 'or',
      filters: [
        {
          op: 'and',
          filters: [
            { op: 'gte', field: 'v', value: 0 },
            { op: 'lt', field: 'v', value: 1 }
          ]
        },
        { op: 'eq', field: 'name', value: 'true' }
      ]
    }
    expect(matching(filter)).toEqual(['zero', 'true'])
  })
})

describe('valuesEqual', () => {
  it('is deep equality of JSON values', () => {
    expect(valuesEqual({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toBe(true)
    expect(valuesEqual({ a: undefined }, { b: undefined })).toBe(false)
    expect(valuesEqual([], {})).toBe(false)
    expect(valuesEqual(null, {})).toBe(false)
    expect(valuesEqual(1, 1)).toBe(true)
  })
})
