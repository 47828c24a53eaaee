import { describe, expect, it } from '@jest/globals'
import { BadRequest, type FeathersError } from '../../../src/domain/errors/errors.js'
import { coerceQuery } from '../../../src/domain/schema/coerce-query.js'
import type { JsonSchemaObject } from '../../../src/domain/schema/json-schema.js'

const schema: JsonSchemaObject = {
  type: 'object',
  properties: {
    age: { type: 'integer' },
    score: { type: 'number' },
    active: { type: 'boolean' },
    nickname: { type: ['string', 'null'] },
    born: { type: 'string', format: 'date-time' },
    ref: { type: ['integer', 'string'] },
    email: { type: 'string', transform: ['trim', 'toLowerCase'] },
    tags: { type: 'array', items: { type: 'integer' } },
    address: { type: 'object', properties: { zip: { type: 'integer' } } }
  },
  additionalProperties: false
}

function refused(raw: unknown, target: JsonSchemaObject = schema): FeathersError {
  try {
    coerceQuery(raw, target)
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequest)
    return error as FeathersError
  }
  throw new Error('expected a 400')
}

describe('coerceQuery', () => {
  it('turns query-string values into the declared types on plain fields', () => {
    expect(coerceQuery({ age: '30', score: '2.5', active: 'false', nickname: 'null', ref: '7' }, schema)).toEqual({
      age: 30,
      score: 2.5,
      active: false,
      nickname: null,
      ref: 7
    })
    expect(coerceQuery({ ref: 'a1b2', nickname: 'nullable' }, schema)).toEqual({ ref: 'a1b2', nickname: 'nullable' })
  })

  it('coerces inside every operator: $in/$nin lists of any length, ranges, $ne, $or and $and', () => {
    const many = Array.from({ length: 500 }, (_, i) => String(i))
    const asQsObject = Object.fromEntries(many.map((value, i) => [String(i), value]))
    const out = coerceQuery(
      {
        age: { $in: many, $gte: '18', $lt: '65', $ne: '40' },
        score: { $nin: asQsObject },
        $or: [{ active: 'true' }, { $and: [{ age: { $gt: '1' } }, { score: '-0.5e1' }] }],
        $limit: '5',
        $sort: { age: '-1' }
      },
      schema
    ) as Record<string, Record<string, unknown>>
    expect(out.age).toEqual({ $in: many.map(Number), $gte: 18, $lt: 65, $ne: 40 })
    expect(out.score).toEqual({ $nin: many.map(Number) })
    expect(out.$or).toEqual([{ active: true }, { $and: [{ age: { $gt: 1 } }, { score: -5 }] }])
    // Paging and sorting are the query parser's business.
    expect(out.$limit).toBe('5')
  })

  it('gives JSON-typed (socket) queries the same values as their string forms', () => {
    const fromRest = coerceQuery({ age: { $in: ['1', '2'] }, active: 'true', born: { $gt: '2026-01-01' } }, schema)
    const fromSocket = coerceQuery(
      { age: { $in: [1, 2] }, active: true, born: { $gt: Date.parse('2026-01-01T00:00:00Z') } },
      schema
    )
    expect(fromSocket).toEqual(fromRest)
    expect(fromRest).toEqual({ age: { $in: [1, 2] }, active: true, born: { $gt: '2026-01-01T00:00:00.000Z' } })
  })

  it('normalises date-times to ISO form and refuses what is not one', () => {
    expect(coerceQuery({ born: '2026-03-04T05:06:07+01:00' }, schema)).toEqual({ born: '2026-03-04T04:06:07.000Z' })
    expect(refused({ born: 'yesterday' }).errors).toEqual({
      born: "'born' must be a date-time (RFC 3339, e.g. 2026-01-31T12:00:00Z)"
    })
    expect(refused({ born: '2026-13-45T00:00:00Z' }).data).toEqual([
      expect.objectContaining({ field: 'born', rule: 'format' })
    ])
  })

  it('refuses NaN, Infinity, 1e999 and non-integers for numbers, and never turns null into 0', () => {
    for (const value of ['NaN', 'Infinity', '-Infinity', '1e999', '0x10', '', ' 1', '1.5']) {
      expect(refused({ age: value }).errors).toEqual({ age: "'age' must be integer" })
    }
    for (const value of ['NaN', 'Infinity', '1e999', 'abc'])
      expect(refused({ score: value }).errors).toEqual({ score: "'score' must be number" })
    expect(coerceQuery({ score: '1e3' }, schema)).toEqual({ score: 1000 })
    expect(coerceQuery({ age: null, score: { $ne: null } }, schema)).toEqual({ age: null, score: { $ne: null } })
    expect(refused({ age: 'null' }).errors).toEqual({ age: "'age' must be integer" })
    expect(refused({ active: 'yes' }).errors).toEqual({ active: "'active' must be boolean" })
  })

  it('lists every failing value of the whole query at once', () => {
    const error = refused({ age: 'x', $or: [{ score: 'y' }], active: { $in: ['true', 'maybe'] }, unknown: '1' })
    expect(error.toJSON()).toMatchObject({ name: 'BadRequest', code: 400, className: 'bad-request' })
    expect(error.message).toBe(
      "Invalid query: 'age' must be integer; 'score' must be number; 'active' must be boolean; 'unknown' is not a field that can be queried"
    )
    expect(Object.keys(error.errors as object)).toEqual(['age', 'score', 'active', 'unknown'])
  })

  it('refuses fields the schema does not allow, also in $or and $sort; allows them with additionalProperties', () => {
    expect(refused({ $or: [{ password: 'x' }] }).errors).toEqual({
      password: "'password' is not a field that can be queried"
    })
    expect(refused({ $sort: { password: 1 } }).errors).toEqual({
      password: "$sort 'password' is not a field that can be queried"
    })
    expect(coerceQuery({ $select: ['password'], id: '1' }, schema, 'id')).toEqual({ $select: ['password'], id: '1' })
    const open: JsonSchemaObject = { ...schema, additionalProperties: true }
    expect(coerceQuery({ custom: '5', age: '5' }, open)).toEqual({ custom: '5', age: 5 })
  })

  it('applies transforms, array items and nested properties', () => {
    expect(coerceQuery({ email: '  Ann@Example.COM ' }, schema)).toEqual({ email: 'ann@example.com' })
    expect(coerceQuery({ tags: { $contains: '3' }, 'address.zip': '00123' }, schema)).toEqual({
      tags: { $contains: 3 },
      'address.zip': 123
    })
    expect(coerceQuery({ email: { $in: ['A@X.IO'] } }, schema)).toEqual({ email: { $in: ['a@x.io'] } })
  })

  it('leaves queries alone when values have no declared type', () => {
    expect(coerceQuery({ a: '1' }, { type: 'object' })).toEqual({ a: '1' })
    expect(coerceQuery(undefined, schema)).toBeUndefined()
  })
})
