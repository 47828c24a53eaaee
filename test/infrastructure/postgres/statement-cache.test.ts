import { describe, expect, it } from '@jest/globals'
import { BadRequest } from '../../../src/domain/errors/errors.js'
import type { Filter, StoreQuery, Value } from '../../../src/domain/query/ast.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import { shapesFromSchema } from '../../../src/domain/schema/field-shapes.js'
import type { JsonSchemaObject } from '../../../src/domain/schema/json-schema.js'
import { Parameters, SqlCompiler } from '../../../src/infrastructure/postgres/sql-compiler.js'
import { queryShape, StatementCache } from '../../../src/infrastructure/postgres/statement-cache.js'

// A statement's text is compiled once per query shape and reused with each query's values: that is only
// right if two queries of one shape always compile to the same text, and if the shape's values are the
// compiler's, in its order. Both are checked here against SqlCompiler itself, over every operator and
// over many generated queries; no database needed.

const schema: JsonSchemaObject = {
  type: 'object',
  required: ['id', 'name', 'age', 'score'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    age: { type: 'integer' },
    score: { type: 'number' },
    nick: { type: ['string', 'null'] },
    flag: { type: ['boolean', 'null'] },
    address: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } }
  }
}
const compiler = new SqlCompiler(shapesFromSchema(schema, 'id'))
const q = (raw: Record<string, unknown>): StoreQuery => parseQuery(raw, { operators: ['$search', '$contains'] })

/** What PostgresStore compiles for a find (paged) or a count (the filter alone). */
function compiled(query: StoreQuery, paged: boolean, params = new Parameters()): { text: string; values: unknown[] } {
  const where = compiler.where(query.filter, params)
  return { text: `${where}${paged ? compiler.pageClause(query, params) : ''}`, values: params.values }
}

const every: Record<string, unknown>[] = [
  {},
  { name: 'Ann' },
  { name: null },
  { nick: { $ne: null } },
  { age: { $ne: 3 } },
  { 'address.city': 'Rome' },
  { age: { $gte: 30, $lt: 60 } },
  { age: { $gt: null } },
  { name: { $lte: 'M' } },
  { nick: { $gt: 'a' } },
  { extra: { $gt: 'a' } },
  { extra: { $lt: 2 } },
  { flag: { $gte: true } },
  { age: { $in: [1, 2] } },
  { age: { $in: [null] } },
  { nick: { $in: ['a', null] } },
  { age: { $in: [] } },
  { age: { $nin: [1, null] } },
  { tags: { $contains: 'x' } },
  { tags: { $contains: null } },
  { tags: { $contains: { a: [1] } } },
  { $or: [{ name: 'A' }, { age: { $lt: 2 } }] },
  { $or: [{ name: 'A' }] },
  { $and: [{ $or: [{ name: 'A' }, { nick: null }] }, { age: { $in: [3] } }] },
  { $limit: 10 },
  { $skip: 5 },
  { $limit: 10, $skip: 5, $sort: { age: -1, name: 1 } },
  { $sort: { nick: 1, flag: -1, extra: 1, 'address.city': -1, score: 1 } },
  { city: { $in: ['Rome', 'Oslo'] }, age: { $gte: 30 }, $sort: { age: -1, name: 1 }, $limit: 10, $select: ['name'] }
]

describe('queryShape', () => {
  it.each(every)('has the values SqlCompiler adds, in its order: %j', (raw) => {
    const query = q(raw)
    for (const paged of [true, false]) expect(queryShape(query, paged).values).toEqual(compiled(query, paged).values)
  })

  it('gives one list of tokens only to queries that compile to one text', () => {
    const texts = new Map<string, string>()
    for (const query of generated(3000)) {
      for (const paged of [true, false]) {
        const { tokens, values } = queryShape(query, paged)
        const { text, values: expected } = compiled(query, paged)
        expect(values).toEqual(expected)
        const key = JSON.stringify([paged, tokens])
        const kept = texts.get(key)
        if (kept === undefined) texts.set(key, text)
        else expect(text).toBe(kept)
      }
    }
    // The generator reaches many shapes, else the check above says little. (Shapes are finer than texts: the null
    // test of a field that is never null is FALSE whatever the field, so such queries share a text, never a shape.)
    expect(new Set(texts.values()).size).toBeGreaterThan(500)
  })

  it('gives each query its own text, whatever its field names read as and wherever its groups end', () => {
    const cache = new StatementCache(100_000)
    const marks = ['and', 'or', ')', 'eq', 'v', 'n', 'vn', '', '|', 'l', 'o', '+', '-', 'number', 's', 'search']
    const queries = [
      ...marks.flatMap((mark) => [
        q({ [mark]: 1 }),
        q({ [mark]: null, x: 1 }),
        q({ $or: [{ [mark]: 1 }, { x: null }] }),
        q({ $sort: { [mark]: 1, x: -1 }, $limit: 1 }),
        q({ x: { $in: [1, null] }, $sort: { [mark]: -1 } })
      ]),
      // Where a group ends: ((a OR b) AND c) against (a OR b OR c).
      grouped([['a', 'b'], ['c']]),
      grouped([['a', 'b', 'c']]),
      ...generated(3000)
    ]
    for (const query of queries) {
      const { text } = cache.statement('find', queryShape(query, true), (params) => compiled(query, true, params).text)
      expect(text).toBe(compiled(query, true).text)
    }
  })

  it('refuses a NUL character in a value, as the compiler does', () => {
    for (const raw of [{ name: 'a\0b' }, { name: { $gt: 'a\0' } }, { tags: { $contains: 'a\0' } }]) {
      expect(() => queryShape(q(raw), true)).toThrow(BadRequest)
      expect(() => compiled(q(raw), true)).toThrow(BadRequest)
    }
  })

  it('holds no field name among the values: they are literals in the text, quoted by node-postgres', () => {
    const query = q({ "it's": 'x', 'back\\slash': { $gt: 1 }, x$1: null, 'a.$2': { $in: ['y'] }, $sort: { 'b.c': 1 } })
    const { text, values } = compiled(query, true)
    expect(values).toEqual(['"x"', '1', ['"y"']])
    expect(queryShape(query, true).values).toEqual(values)
    expect(text).toContain(`(doc -> 'it''s') = $1::jsonb`)
    expect(text).toContain(`(doc ->  E'back\\\\slash') > $2::jsonb`)
    expect(text).toContain(`(doc -> 'x$1') IS NULL`)
    expect(text).toContain(`(doc -> 'a' -> '$2') = ANY($3::jsonb[])`)
    expect(text).toContain(`(doc -> 'b' -> 'c')`)
  })
})

describe('StatementCache', () => {
  const statement = (cache: StatementCache, query: StoreQuery, counter: { compiles: number }) =>
    cache.statement('find', queryShape(query, true), (params) => {
      counter.compiles++
      return `${compiler.where(query.filter, params)}${compiler.pageClause(query, params)}`
    })

  it('compiles a shape once and reads each query of it with its own values', () => {
    const cache = new StatementCache()
    const counter = { compiles: 0 }
    const first = statement(cache, q({ name: 'Ann', $limit: 5 }), counter)
    const second = statement(cache, q({ name: 'Bob', $limit: 7 }), counter)
    expect(counter.compiles).toBe(1)
    expect(second.text).toBe(first.text)
    expect(second.values).toEqual(['"Bob"', 7])
    statement(cache, q({ name: 'Ann', $limit: 5, $skip: 1 }), counter)
    expect(counter.compiles).toBe(2)
  })

  it('refuses a field name with the NUL character when it compiles, and keeps nothing of it', () => {
    const cache = new StatementCache()
    const counter = { compiles: 0 }
    for (const raw of [
      { 'na\0me': 1 },
      { 'a.b\0': null },
      { $sort: { 'a\0': 1 } },
      { x: { $contains: 1 }, 'y\0': 2 }
    ]) {
      expect(() => statement(cache, q(raw), counter)).toThrow(BadRequest)
      expect(() => statement(cache, q(raw), counter)).toThrow(BadRequest)
    }
    expect(counter.compiles).toBe(8)
  })

  it('starts again empty when it holds its limit of shapes', () => {
    const cache = new StatementCache(2)
    const counter = { compiles: 0 }
    for (const field of ['a', 'b', 'c', 'a']) statement(cache, q({ [field]: 1 }), counter)
    expect(counter.compiles).toBe(4)
    statement(cache, q({ a: 2 }), counter)
    expect(counter.compiles).toBe(4)
  })

  it('never keeps a text whose parameters are not the shape values', () => {
    const cache = new StatementCache()
    let compiles = 0
    const shape = queryShape(q({ name: 'Ann' }), false)
    const wrong = () =>
      cache.statement('count', shape, (params) => {
        compiles++
        return `x = ${params.add('other', 'text')}`
      })
    expect(wrong()).toEqual({ text: 'x = $1::text', values: ['other'] })
    expect(wrong()).toEqual({ text: 'x = $1::text', values: ['other'] })
    expect(compiles).toBe(2)
  })
})

/** AND of `field = 1` conditions, an OR of them for a group of several. */
function grouped(groups: string[][]): StoreQuery {
  const equal = (field: string): Filter => ({ op: 'eq', field, value: 1 })
  const filters = groups.map((fields): Filter =>
    fields.length === 1 ? equal(fields[0]!) : { op: 'or', filters: fields.map(equal) }
  )
  return { filter: { op: 'and', filters }, sort: [], skip: 0 }
}

/** `count` queries from a fixed-seed generator: every operator, null and non-null values, nesting, sorts, pages. */
function generated(count: number): StoreQuery[] {
  let seed = 7
  // The high bits: an LCG's low bits repeat with a short period.
  const random = (n: number) => Math.floor(((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n)
  const pick = <T>(items: readonly T[]): T => items[random(items.length)]!
  const fields = [
    'name',
    'age',
    'score',
    'nick',
    'flag',
    'extra',
    'address.city',
    'a.b.c',
    '1:x',
    'p,q)',
    ')',
    'v',
    '|'
  ]
  const values: Value[] = [null, 'Rome', '', 3, 2.5, -1, true, false, [1, 'a'], { k: null }]
  const filter = (depth: number): Filter => {
    const kind = random(depth > 1 ? 7 : 9)
    const field = pick(fields)
    switch (kind) {
      case 0:
        return { op: pick(['eq', 'ne'] as const), field, value: pick(values) }
      case 1:
        return { op: pick(['lt', 'lte', 'gt', 'gte'] as const), field, value: pick([null, 'M', 4, 1.5, true]) }
      case 2:
      case 3:
        return {
          op: pick(['in', 'nin'] as const),
          field,
          values: Array.from({ length: random(4) }, () => pick(values))
        }
      case 4:
        return { op: 'contains', field, value: pick(values) }
      case 5:
      case 6:
        return { op: 'eq', field, value: pick(values) }
      default:
        return { op: pick(['and', 'or'] as const), filters: Array.from({ length: random(4) }, () => filter(depth + 1)) }
    }
  }
  return Array.from({ length: count }, () => ({
    filter: filter(0),
    sort: Array.from({ length: random(3) }, () => [pick(fields), pick([1, -1] as const)] as [string, 1 | -1]),
    skip: pick([0, 0, 4]),
    ...(random(3) > 0 ? { limit: pick([0, 10]) } : {})
  }))
}
