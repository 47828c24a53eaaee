import { BadRequest, type FeathersError } from '../../../src/domain/errors/errors.js'
import { EMPTY_QUERY, type Filter } from '../../../src/domain/query/ast.js'
import { parseQuery, type ParseOptions } from '../../../src/domain/query/parse-query.js'

const EXTRA: ParseOptions = { operators: ['$search', '$contains'] }
const filterOf = (raw: unknown, options?: ParseOptions): Filter => parseQuery(raw, options).filter

/** Parses `raw`, expecting a BadRequest; returns it for further checks. */
function badRequest(raw: unknown, message: string | RegExp, options?: ParseOptions): FeathersError {
  let caught: unknown
  try {
    parseQuery(raw, options)
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(BadRequest)
  const error = caught as FeathersError
  expect(error).toMatchObject({ name: 'BadRequest', code: 400 })
  if (typeof message === 'string') expect(error.message).toBe(message)
  else expect(error.message).toMatch(message)
  return error
}

/** An object with keys '0'..'n-1', as qs makes of an array longer than its arrayLimit. */
const indexed = (values: unknown[]): Record<string, unknown> =>
  Object.fromEntries(values.map((value, index) => [String(index), value]))

describe('parseQuery', () => {
  describe('the query object', () => {
    it('returns the match-all query for undefined, null and {}', () => {
      for (const raw of [undefined, null, {}]) {
        const query = parseQuery(raw)
        expect(query).toEqual(EMPTY_QUERY)
        expect(query).not.toHaveProperty('limit')
        expect(query).not.toHaveProperty('select')
      }
    })

    it('rejects a query that is not an object', () => {
      badRequest('name=Ann', /query/i)
      badRequest([{ name: 'Ann' }], /query/i)
    })

    it('ignores keys whose value is undefined', () => {
      expect(parseQuery({ name: undefined, $limit: undefined })).toEqual(EMPTY_QUERY)
    })
  })

  describe('equality', () => {
    it('turns a field value into eq', () => {
      expect(filterOf({ name: 'Ann' })).toEqual({ op: 'eq', field: 'name', value: 'Ann' })
    })

    it('keeps JSON types of the value (no coercion of REST strings)', () => {
      expect(filterOf({ age: '30' })).toEqual({ op: 'eq', field: 'age', value: '30' })
      expect(filterOf({ age: 30 })).toEqual({ op: 'eq', field: 'age', value: 30 })
      expect(filterOf({ ok: false })).toEqual({ op: 'eq', field: 'ok', value: false })
    })

    it('treats { x: null } as equality with null', () => {
      expect(filterOf({ x: null })).toEqual({ op: 'eq', field: 'x', value: null })
    })

    it('treats $eq as equality', () => {
      expect(filterOf({ age: { $eq: 30 } })).toEqual({ op: 'eq', field: 'age', value: 30 })
      expect(filterOf({ x: { $eq: null } })).toEqual({ op: 'eq', field: 'x', value: null })
    })

    it('compares a whole object when its keys are not operators', () => {
      expect(filterOf({ address: { city: 'Rome' } })).toEqual({ op: 'eq', field: 'address', value: { city: 'Rome' } })
    })

    it('keeps a dotted field name as the path of a nested field', () => {
      expect(filterOf({ 'address.city': 'Rome' })).toEqual({ op: 'eq', field: 'address.city', value: 'Rome' })
    })

    it('combines several fields with and, in key order', () => {
      expect(filterOf({ name: 'Ann', age: 30 })).toEqual({
        op: 'and',
        filters: [
          { op: 'eq', field: 'name', value: 'Ann' },
          { op: 'eq', field: 'age', value: 30 }
        ]
      })
    })
  })

  describe('field operators', () => {
    it('parses $ne, $lt, $lte, $gt and $gte', () => {
      expect(filterOf({ a: { $ne: 1 } })).toEqual({ op: 'ne', field: 'a', value: 1 })
      expect(filterOf({ a: { $ne: null } })).toEqual({ op: 'ne', field: 'a', value: null })
      expect(filterOf({ a: { $lt: 1 } })).toEqual({ op: 'lt', field: 'a', value: 1 })
      expect(filterOf({ a: { $lte: '1' } })).toEqual({ op: 'lte', field: 'a', value: '1' })
      expect(filterOf({ a: { $gt: 1 } })).toEqual({ op: 'gt', field: 'a', value: 1 })
      expect(filterOf({ a: { $gte: 'b' } })).toEqual({ op: 'gte', field: 'a', value: 'b' })
    })

    it('combines several operators on one field with and, in key order', () => {
      expect(filterOf({ age: { $gt: 18, $lt: 30 } })).toEqual({
        op: 'and',
        filters: [
          { op: 'gt', field: 'age', value: 18 },
          { op: 'lt', field: 'age', value: 30 }
        ]
      })
    })

    it('rejects a range operator whose operand is not a single value', () => {
      badRequest({ age: { $lt: [1, 2] } }, /\$lt/)
      badRequest({ age: { $gte: { n: 1 } } }, /\$gte/)
    })

    it('rejects an unknown field operator naming it, with the object that contained it as data', () => {
      const error = badRequest({ name: { $regex: 'A' } }, 'Invalid query parameter $regex')
      expect(error.data).toEqual({ $regex: 'A' })
      expect(error.toJSON()).toMatchObject({ message: 'Invalid query parameter $regex', data: { $regex: 'A' } })
    })

    it('rejects a plain key mixed with operators in one field object', () => {
      badRequest({ name: { $ne: 'A', first: 'B' } }, 'Invalid query parameter first')
    })
  })

  describe('$in and $nin', () => {
    it('takes a list of values', () => {
      expect(filterOf({ name: { $in: ['Ann', 'Bob'] } })).toEqual({ op: 'in', field: 'name', values: ['Ann', 'Bob'] })
      expect(filterOf({ name: { $nin: ['Ann', null] } })).toEqual({ op: 'nin', field: 'name', values: ['Ann', null] })
    })

    it('accepts an empty list', () => {
      expect(filterOf({ name: { $in: [] } })).toEqual({ op: 'in', field: 'name', values: [] })
    })

    it('turns a scalar into a one-item list', () => {
      expect(filterOf({ name: { $in: 'Ann' } })).toEqual({ op: 'in', field: 'name', values: ['Ann'] })
      expect(filterOf({ age: { $nin: 3 } })).toEqual({ op: 'nin', field: 'age', values: [3] })
    })

    it('turns an object with keys exactly 0..n-1 (qs over its arrayLimit) into a list in index order', () => {
      const values = Array.from({ length: 25 }, (_, index) => `v${index}`)
      expect(filterOf({ name: { $in: indexed(values) } })).toEqual({ op: 'in', field: 'name', values })
      expect(filterOf({ name: { $nin: indexed(['a', 'b']) } })).toEqual({
        op: 'nin',
        field: 'name',
        values: ['a', 'b']
      })
    })

    it('rejects any other object with the containing object as data', () => {
      const error = badRequest({ name: { $in: { a: 'Ann' } } }, /\$in/)
      expect(error.data).toEqual({ $in: { a: 'Ann' } })
      badRequest({ name: { $in: { 0: 'a', 2: 'b' } } }, /\$in/)
      badRequest({ name: { $nin: { 1: 'a' } } }, /\$nin/)
      badRequest({ name: { $nin: {} } }, /\$nin/)
    })
  })

  describe('adapter operators $search and $contains', () => {
    it('rejects $search unless the store lists it, like an unknown operator', () => {
      const error = badRequest({ name: { $search: '^A' } }, 'Invalid query parameter $search')
      expect(error.data).toEqual({ $search: '^A' })
      badRequest({ name: { $search: '^A' } }, 'Invalid query parameter $search', { operators: ['$contains'] })
    })

    it('rejects $contains unless the store lists it, like an unknown operator', () => {
      const error = badRequest({ tags: { $contains: 'red' } }, 'Invalid query parameter $contains')
      expect(error.data).toEqual({ $contains: 'red' })
      badRequest({ tags: { $contains: 'red' } }, 'Invalid query parameter $contains', { operators: ['$search'] })
    })

    it('parses $search when listed', () => {
      expect(filterOf({ name: { $search: '(?i)ann' } }, EXTRA)).toEqual({
        op: 'search',
        field: 'name',
        pattern: '(?i)ann'
      })
    })

    it('rejects a $search pattern that is not a string', () => {
      badRequest({ name: { $search: 5 } }, /\$search/, EXTRA)
      badRequest({ name: { $search: ['a'] } }, /\$search/, EXTRA)
    })

    it('parses $contains when listed', () => {
      expect(filterOf({ tags: { $contains: 'red' } }, EXTRA)).toEqual({ op: 'contains', field: 'tags', value: 'red' })
      expect(filterOf({ tags: { $contains: 3 } }, EXTRA)).toEqual({ op: 'contains', field: 'tags', value: 3 })
    })

    it('still rejects other unknown operators when adapter operators are listed', () => {
      badRequest({ name: { $regex: 'A' } }, 'Invalid query parameter $regex', EXTRA)
    })
  })

  describe('top-level keys', () => {
    it('rejects an unknown $key naming it, without data', () => {
      const error = badRequest({ $foo: 1 }, 'Invalid filter value $foo')
      expect(error.data).toBeUndefined()
      badRequest({ $eq: 1 }, 'Invalid filter value $eq')
      badRequest({ $search: 'A' }, 'Invalid filter value $search', EXTRA)
    })
  })

  describe('$limit and $skip', () => {
    it('accepts non-negative integers as numbers or numeric strings', () => {
      expect(parseQuery({ $limit: 5, $skip: 10 })).toMatchObject({ limit: 5, skip: 10 })
      expect(parseQuery({ $limit: '5', $skip: '10' })).toMatchObject({ limit: 5, skip: 10 })
      expect(parseQuery({ $limit: 0, $skip: '0' })).toMatchObject({ limit: 0, skip: 0 })
    })

    it('defaults to no limit and skip 0', () => {
      const query = parseQuery({ name: 'Ann' })
      expect(query.limit).toBeUndefined()
      expect(query.skip).toBe(0)
    })

    it.each(['$limit', '$skip'])('rejects negative, fractional and non-numeric %s with a message naming it', (name) => {
      for (const value of [
        -1,
        '-1',
        1.5,
        '1.5',
        'abc',
        '',
        ' 5',
        '1e3',
        true,
        null,
        [5],
        { n: 5 },
        Number.NaN,
        Infinity
      ]) {
        badRequest({ [name]: value }, new RegExp(`\\${name}`))
      }
    })
  })

  describe('$sort', () => {
    it('keeps the key order as priority', () => {
      expect(parseQuery({ $sort: { age: -1, name: 1 } }).sort).toEqual([
        ['age', -1],
        ['name', 1]
      ])
      expect(parseQuery({ $sort: { name: 1, age: -1 } }).sort).toEqual([
        ['name', 1],
        ['age', -1]
      ])
    })

    it('accepts 1, -1, "1", "-1", "asc" and "desc"', () => {
      expect(parseQuery({ $sort: { a: 1, b: -1, c: '1', d: '-1', e: 'asc', f: 'desc' } }).sort).toEqual([
        ['a', 1],
        ['b', -1],
        ['c', 1],
        ['d', -1],
        ['e', 1],
        ['f', -1]
      ])
    })

    it('rejects any other direction with a message naming the field', () => {
      for (const direction of [0, 2, '2', 'up', 'ascending', true, null, '', { x: 1 }]) {
        badRequest({ $sort: { name: direction } }, /\$sort.*name|name.*\$sort/)
      }
    })

    it('rejects a direction given as a list', () => {
      badRequest({ $sort: { name: [1] } }, /\$sort/)
      badRequest({ $sort: { name: ['-1'] } }, /\$sort/)
    })

    it('rejects a $sort that is not an object', () => {
      badRequest({ $sort: 'name' }, /\$sort/)
      badRequest({ $sort: ['name'] }, /\$sort/)
      badRequest({ $sort: 1 }, /\$sort/)
    })
  })

  describe('$select', () => {
    it('takes a list of field names', () => {
      expect(parseQuery({ $select: ['name', 'age'] }).select).toEqual(['name', 'age'])
      expect(parseQuery({ $select: [] }).select).toEqual([])
    })

    it('turns a single string into a one-item list', () => {
      expect(parseQuery({ $select: 'name' }).select).toEqual(['name'])
    })

    it('turns an object with keys exactly 0..n-1 into a list', () => {
      expect(parseQuery({ $select: indexed(['name', 'age']) }).select).toEqual(['name', 'age'])
    })

    it('rejects other objects and non-string names', () => {
      badRequest({ $select: { name: 1 } }, /\$select/)
      badRequest({ $select: [1] }, /\$select/)
      badRequest({ $select: ['name', null] }, /\$select/)
      badRequest({ $select: 5 }, /\$select/)
    })
  })

  describe('$or and $and', () => {
    it('parses $or as any of its criteria', () => {
      expect(filterOf({ $or: [{ name: 'Ann' }, { age: { $gt: 30 } }] })).toEqual({
        op: 'or',
        filters: [
          { op: 'eq', field: 'name', value: 'Ann' },
          { op: 'gt', field: 'age', value: 30 }
        ]
      })
    })

    it('parses $and as all of its criteria', () => {
      expect(filterOf({ $and: [{ name: 'Ann' }, { age: 30 }] })).toEqual({
        op: 'and',
        filters: [
          { op: 'eq', field: 'name', value: 'Ann' },
          { op: 'eq', field: 'age', value: 30 }
        ]
      })
    })

    it('combines several fields of one criteria object with and', () => {
      expect(filterOf({ $or: [{ name: 'Ann', age: 30 }, { name: 'Bob' }] })).toEqual({
        op: 'or',
        filters: [
          {
            op: 'and',
            filters: [
              { op: 'eq', field: 'name', value: 'Ann' },
              { op: 'eq', field: 'age', value: 30 }
            ]
          },
          { op: 'eq', field: 'name', value: 'Bob' }
        ]
      })
    })

    it('combines $or with top-level fields with and', () => {
      expect(filterOf({ city: 'Rome', $or: [{ name: 'Ann' }] })).toEqual({
        op: 'and',
        filters: [
          { op: 'eq', field: 'city', value: 'Rome' },
          { op: 'or', filters: [{ op: 'eq', field: 'name', value: 'Ann' }] }
        ]
      })
    })

    it('parses $or and $and nested in criteria', () => {
      expect(filterOf({ $or: [{ $or: [{ name: 'Ann' }, { name: 'Bob' }] }, { $and: [{ age: 1 }] }] })).toEqual({
        op: 'or',
        filters: [
          {
            op: 'or',
            filters: [
              { op: 'eq', field: 'name', value: 'Ann' },
              { op: 'eq', field: 'name', value: 'Bob' }
            ]
          },
          { op: 'and', filters: [{ op: 'eq', field: 'age', value: 1 }] }
        ]
      })
    })

    it('turns an object with keys exactly 0..n-1 into the list of criteria', () => {
      expect(filterOf({ $or: indexed([{ name: 'Ann' }, { name: 'Bob' }]) })).toEqual({
        op: 'or',
        filters: [
          { op: 'eq', field: 'name', value: 'Ann' },
          { op: 'eq', field: 'name', value: 'Bob' }
        ]
      })
      expect(filterOf({ $and: indexed([{ name: 'Ann' }]) })).toEqual({
        op: 'and',
        filters: [{ op: 'eq', field: 'name', value: 'Ann' }]
      })
    })

    it('rejects a value that is not a list of criteria objects', () => {
      badRequest({ $or: { name: 'Ann' } }, /\$or/)
      badRequest({ $and: 'name' }, /\$and/)
      badRequest({ $or: ['name'] }, /\$or/)
      badRequest({ $and: [null] }, /\$and/)
    })

    it('checks operators inside criteria, naming the offending key with its object as data', () => {
      const error = badRequest({ $or: [{ name: 'Ann' }, { $foo: 1 }] }, 'Invalid query parameter $foo')
      expect(error.data).toEqual({ $foo: 1 })
      const nested = badRequest({ $and: [{ name: { $regex: 'A' } }] }, 'Invalid query parameter $regex')
      expect(nested.data).toEqual({ $regex: 'A' })
      badRequest({ $or: [{ name: { $search: 'A' } }] }, 'Invalid query parameter $search')
      expect(filterOf({ $or: [{ name: { $search: 'A' } }] }, EXTRA)).toEqual({
        op: 'or',
        filters: [{ op: 'search', field: 'name', pattern: 'A' }]
      })
    })

    it('keeps fields named message and errors in the data of the error', () => {
      const error = badRequest({ $or: [{ message: 'hi', errors: 'none', $foo: 1 }] }, 'Invalid query parameter $foo')
      expect(error.data).toEqual({ message: 'hi', errors: 'none', $foo: 1 })
      expect(error.errors).toEqual({})
    })

    it('rejects $limit, $skip, $sort and $select inside criteria', () => {
      for (const key of ['$limit', '$skip', '$sort', '$select'])
        badRequest({ $or: [{ [key]: 1 }] }, `Invalid query parameter ${key}`)
    })
  })

  describe('prototype keys', () => {
    const json = (text: string): unknown => JSON.parse(text)

    it('refuses __proto__ from JSON at the top level', () => {
      badRequest(json('{"__proto__":{"name":"Ann"}}'), /__proto__/)
    })

    it('refuses __proto__ in a field value, an operator object, a list value and criteria', () => {
      badRequest({ address: json('{"__proto__":{"admin":true}}') }, /__proto__/)
      badRequest({ name: json('{"$ne":"a","__proto__":{"x":1}}') }, /__proto__/)
      badRequest({ name: { $in: [json('{"__proto__":{"x":1}}')] } }, /__proto__/)
      badRequest({ $or: [json('{"__proto__":{"name":"Ann"}}')] }, /__proto__/)
      badRequest({ $sort: json('{"__proto__":1}') }, /__proto__/)
    })

    it.each(['constructor', 'prototype'])('refuses %s as a field, a $sort key and a $select name', (key) => {
      badRequest({ [key]: 'x' }, new RegExp(key))
      badRequest({ $or: [{ [key]: 'x' }] }, new RegExp(key))
      badRequest({ $sort: { [key]: 1 } }, new RegExp(key))
      badRequest({ $select: [key] }, new RegExp(key))
      badRequest({ name: { $nin: [{ [key]: 1 }] } }, new RegExp(key))
    })

    it('refuses prototype keys as segments of a dotted field name', () => {
      badRequest({ '__proto__.polluted': 1 }, /__proto__/)
      badRequest({ 'a.constructor.prototype': { $ne: null } }, /constructor|prototype/)
      badRequest({ $sort: { 'a.__proto__': 1 } }, /__proto__/)
    })
  })
})

describe('nesting limits', () => {
  it('refuses values and $or/$and chains nested deeper than 64 levels instead of overflowing the stack', () => {
    const deep = JSON.parse('['.repeat(20_000) + ']'.repeat(20_000)) as unknown
    badRequest({ text: deep }, /nested at most 64 levels/)
    badRequest({ text: { $in: [deep] } }, /nested at most 64 levels/)
    let chain: Record<string, unknown> = { a: 1 }
    for (let level = 0; level < 5000; level++) chain = { $or: [chain] }
    badRequest(chain, /\$or\/\$and may be nested at most 64 levels/)
  })

  it('keeps $in lists of any length (list positions are not depth)', () => {
    const values = Array.from({ length: 500 }, (_, index) => [index])
    expect(filterOf({ a: { $in: values } })).toEqual({ op: 'in', field: 'a', values })
  })
})
