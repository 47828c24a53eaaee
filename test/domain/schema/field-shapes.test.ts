import { onlyKinds, shapesFromSchema, UNKNOWN_SHAPES } from '../../../src/domain/schema/field-shapes.js'
import { candidateKeys } from '../../../src/infrastructure/rethinkdb/record-keys.js'

const shapes = shapesFromSchema(
  {
    type: 'object',
    required: ['age', 'address', 'tags', 'maybe'],
    properties: {
      age: { type: 'integer' },
      nick: { type: ['string', 'null'] },
      role: { enum: ['admin', 'user', null] },
      level: { const: 3 },
      tags: { type: 'array', items: { type: 'string' } },
      anything: {},
      flag: true,
      address: {
        type: 'object',
        required: ['city'],
        properties: { city: { type: 'string' }, zip: { type: 'string' } }
      },
      maybe: { type: ['object', 'null'], required: ['x'], properties: { x: { type: 'number' } } },
      text: { type: 'string' }
    }
  },
  'id'
)

describe('shapesFromSchema', () => {
  it('reads kinds from type (integer is a number), enum and const, and presence from required', () => {
    expect(shapes('age')).toEqual({ kinds: new Set(['number']), required: true })
    expect(shapes('nick')).toEqual({ kinds: new Set(['string', 'null']), required: false })
    expect(shapes('role')).toEqual({ kinds: new Set(['string', 'null']), required: false })
    expect(shapes('level')).toEqual({ kinds: new Set(['number']), required: false })
    expect(shapes('tags')).toEqual({ kinds: new Set(['array']), required: true })
  })

  it('knows nothing of fields without a type, nor of undeclared ones', () => {
    expect(shapes('anything')).toBeUndefined()
    expect(shapes('flag')).toBeUndefined()
    expect(shapes('undeclared')).toBeUndefined()
    expect(UNKNOWN_SHAPES('age')).toBeUndefined()
    expect(shapesFromSchema(undefined)('age')).toBeUndefined()
  })

  it('follows dotted names through objects; a parent that may be null or missing makes the field optional', () => {
    expect(shapes('address.city')).toEqual({ kinds: new Set(['string']), required: true })
    expect(shapes('address.zip')).toEqual({ kinds: new Set(['string']), required: false })
    expect(shapes('maybe.x')).toEqual({ kinds: new Set(['number']), required: false })
    expect(shapes('tags.length')).toBeUndefined()
    expect(shapes('text.length')).toBeUndefined()
  })

  it('counts the id field as present in every record', () => {
    expect(shapesFromSchema({ properties: { id: { type: 'string' } } }, 'id')('id')).toEqual({
      kinds: new Set(['string']),
      required: true
    })
  })

  it('tells whether every present value is of the given kinds', () => {
    expect(onlyKinds(shapes('nick'), 'string')).toBe(false)
    expect(onlyKinds(shapes('nick'), 'string', 'null')).toBe(true)
    expect(onlyKinds(undefined, 'string')).toBe(false)
  })
})

describe('candidateKeys', () => {
  const numeric = shapes('age')
  const text = shapes('address.city')

  it('tries the exact id, then its other form, when the key kind is unknown', () => {
    expect(candidateKeys('0', undefined)).toEqual(['0', 0])
    expect(candidateKeys(42, undefined)).toEqual([42, '42'])
    expect(candidateKeys('abc', undefined)).toEqual(['abc'])
    expect(candidateKeys('1e3', undefined)).toEqual(['1e3'])
    expect(candidateKeys(Number.NaN, undefined)).toEqual([Number.NaN])
  })

  it('takes only the form of a key of known kind, and none that cannot be one', () => {
    expect(candidateKeys('42', numeric)).toEqual([42])
    expect(candidateKeys(42, numeric)).toEqual([42])
    expect(candidateKeys('abc', numeric)).toEqual([])
    expect(candidateKeys(42, text)).toEqual(['42'])
  })
})
