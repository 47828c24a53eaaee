import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import qs from 'qs'
import { stringifyQuery } from '../../../../src/interfaces/client/rest/query-string.js'

const key = fc.oneof(
  fc.string({ minLength: 1, maxLength: 6 }),
  fc.constantFrom('$in', '$or', '$limit', '$sort', 'a b', 'x[y]')
)
const leaf = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.date({ noInvalidDate: true })
)
const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(key, tie('node'), { maxKeys: 4 })
  )
})).node
const query = fc.dictionary(key, value, { maxKeys: 5 })

describe('stringifyQuery', () => {
  it('produces exactly what qs.stringify produces with its defaults', () => {
    fc.assert(
      fc.property(query, (q) => {
        expect(stringifyQuery(q)).toBe(qs.stringify(q))
      }),
      { numRuns: 500 }
    )
  })

  it('matches the query string the official REST client sends', () => {
    expect(
      stringifyQuery({ a: 1, b: true, n: null, arr: [1, 2], nested: { $gt: 5 }, $limit: 2, $sort: { x: -1 } })
    ).toBe('a=1&b=true&n=&arr%5B0%5D=1&arr%5B1%5D=2&nested%5B%24gt%5D=5&%24limit=2&%24sort%5Bx%5D=-1')
  })

  it('skips undefined values and empty containers', () => {
    expect(stringifyQuery({ u: undefined, e: [], o: {}, k: 'v' })).toBe('k=v')
  })
})
