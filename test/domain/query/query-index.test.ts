import { describe, expect, it } from '@jest/globals'
import { compileFilter } from '../../../src/domain/query/compile-filter.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import { QueryIndex, anchorOf } from '../../../src/domain/query/query-index.js'

const filter = (raw: Record<string, unknown>) => parseQuery(raw).filter

describe('anchorOf', () => {
  it('finds the equality every match must satisfy, preferring the one with fewest values', () => {
    expect(anchorOf(filter({ room: 'a' }))).toEqual({ field: 'room', values: ['a'] })
    expect(anchorOf(filter({ room: { $in: ['a', 'b'] }, userId: 3, score: { $gt: 1 } }))).toEqual({
      field: 'userId',
      values: [3]
    })
    expect(anchorOf(filter({ 'address.city': 'Oslo' }))).toEqual({ field: 'address.city', values: ['Oslo'] })
  })

  it('finds none where a match need not hold one value: $or, ranges, null (also a missing field)', () => {
    expect(anchorOf(filter({ $or: [{ room: 'a' }, { room: 'b' }] }))).toBeUndefined()
    expect(anchorOf(filter({ score: { $gte: 2 } }))).toBeUndefined()
    expect(anchorOf(filter({ to: null }))).toBeUndefined()
    expect(anchorOf(filter({}))).toBeUndefined()
  })
})

describe('QueryIndex', () => {
  it('files a query whose $in repeats a value once, and deletes it without a trace', () => {
    const index = new QueryIndex<string>()
    index.add('twice', filter({ tag: { $in: ['a', 'a', 'b'] } }))
    index.add('other', filter({ tag: 'b' }))
    expect([...index.candidates({ tag: 'a' })]).toEqual(['twice'])
    index.delete('twice')
    expect([...index.candidates({ tag: 'a' })]).toEqual([])
    expect([...index.candidates({ tag: 'b' })]).toEqual(['other'])
    index.delete('other')
    expect(index.size).toBe(0)
  })

  it('gives every query a record matches among its candidates (10,000 random records and queries)', () => {
    let seed = 7
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
    const shapes = [
      () => ({ room: pick(['a', 'b', 'c']) }),
      () => ({ room: { $in: [pick(['a', 'b']), pick(['c', 'd'])] }, n: { $gt: pick([1, 5]) } }),
      () => ({ n: pick([1, 2, '1']) }),
      () => ({ $or: [{ room: 'a' }, { n: 2 }] }),
      () => ({ n: { $lt: 4 } })
    ]
    const index = new QueryIndex<number>()
    const queries = Array.from({ length: 200 }, (_, id) => {
      const compiled = filter(pick(shapes)())
      index.add(id, compiled)
      return compileFilter(compiled)
    })
    for (let step = 0; step < 10_000 / 200; step++) {
      const record: Doc = { room: pick(['a', 'b', 'c', 'd', undefined]), n: pick([1, 2, 3, '1', 5, 6]) }
      const candidates = index.candidates(record)
      const missed = queries.flatMap((matches, id) => (matches(record) && !candidates.has(id) ? [id] : []))
      expect(missed).toEqual([])
    }
  })

  it('looks at the queries anchored at the record’s values only, however many others there are', () => {
    const index = new QueryIndex<string>()
    for (let room = 0; room < 10_000; room++) index.add(`room ${room}`, filter({ room: `r${room}` }))
    index.add('any', filter({ n: { $gt: 1 } }))
    expect([...index.candidates({ room: 'r42', n: 2 })].sort()).toEqual(['any', 'room 42'])
    index.delete('room 42')
    expect([...index.candidates({ room: 'r42' })]).toEqual(['any'])
    expect(index.size).toBe(10_000)
  })
})
