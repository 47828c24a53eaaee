import { r, type RDatum } from 'rethinkdb-ts'
import { MATCH_ALL, type Filter, type StoreQuery } from '../../../src/domain/query/ast.js'
import type { JsonSchemaObject } from '../../../src/domain/schema/json-schema.js'
import { shapesFromSchema } from '../../../src/domain/schema/field-shapes.js'
import { conjuncts, ReqlCompiler, selection } from '../../../src/infrastructure/rethinkdb/reql-compiler.js'

// Building ReQL terms needs no connection: these tests read the term each query compiles to
// (rethinkdb-ts prints terms in JavaScript syntax; the variable names are renumbered per term).
// Whether the terms answer like the memory adapter is the Store contract's job (src/testing/store).

const table = r.table('items')
const untyped = new ReqlCompiler(r)
/** Records whose `age` is always a number, `name` a string or null, `nick` an optional string, `tags` an array. */
const schema: JsonSchemaObject = {
  type: 'object',
  required: ['age', 'name', 'address', 'tags'],
  properties: {
    age: { type: 'integer' },
    name: { type: ['string', 'null'] },
    nick: { type: 'string' },
    tags: { type: 'array' },
    done: { type: 'boolean' },
    address: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } }
  }
}
const typed = new ReqlCompiler(r, shapesFromSchema(schema))

const where = (filter: Filter, compiler = untyped): string => compiler.filter(table, filter).toString()
/** The term of a function filter with this body. */
const fn = (body: string): string => `r.expr("items").table().filter((var_1) => ${body})`
const at = (name: string): string => `var_1("${name}")`
const safe = (name: string): string => `var_1("${name}").default(null)`
const query = (overrides: Partial<StoreQuery>): StoreQuery => ({ filter: MATCH_ALL, sort: [], skip: 0, ...overrides })

describe('field access', () => {
  const read = (path: string, isSafe: boolean, compiler = untyped): string =>
    r
      .expr({})
      .do((doc: RDatum) => compiler.read(doc, path, isSafe))
      .toString()

  it('reads a plain name directly, and as null when missing only where asked to', () => {
    expect(read('name', false)).toBe('r.expr({}).do((var_1) => var_1("name"))')
    expect(read('name', true)).toBe('r.expr({}).do((var_1) => var_1("name").default(null))')
  })

  it('walks a dotted name through objects only, null through anything else', () => {
    const guarded =
      'r.expr({}).do((var_1) => var_1("address").default(null)' +
      '.do((var_2) => var_2.typeOf().eq("OBJECT").branch(var_2("city").default(null), null)))'
    expect(read('address.city', true)).toBe(guarded)
    expect(read('address.city', false)).toBe(guarded)
    expect(read('address.city', true, typed)).toBe(guarded)
  })

  it('reads a dotted name directly where a missing field skips the row and its parents are known objects', () => {
    expect(read('address.city', false, typed)).toBe('r.expr({}).do((var_1) => var_1("address")("city"))')
  })
})

describe('filters', () => {
  it('leaves the sequence alone when the filter matches everything', () => {
    expect(untyped.filter(table, MATCH_ALL)).toBe(table)
  })

  it('turns equalities of plain names with strings, numbers and booleans into one object filter', () => {
    const filter: Filter = {
      op: 'and',
      filters: [
        { op: 'eq', field: 'name', value: 'Alice' },
        { op: 'eq', field: 'age', value: 19 },
        { op: 'eq', field: 'done', value: false }
      ]
    }
    expect(where(filter)).toBe('r.expr("items").table().filter({ name: "Alice", age: 19, done: false })')
  })

  it('keeps null, objects, dotted names and a second equality of one field out of the object filter', () => {
    expect(where({ op: 'eq', field: 'city', value: null })).toBe(fn(`${safe('city')}.eq(null)`))
    expect(where({ op: 'eq', field: 'tags', value: { a: [1, 'x'] } })).toBe(fn(`${at('tags')}.eq({ a: [1, "x"] })`))
    const twice: Filter = {
      op: 'and',
      filters: [
        { op: 'eq', field: 'age', value: 1 },
        { op: 'eq', field: 'age', value: 2 }
      ]
    }
    expect(where(twice)).toBe(`r.expr("items").table().filter({ age: 1 }).filter((var_1) => ${at('age')}.eq(2))`)
  })

  it('reads without default(null) in strict positions only: under $or every read defaults', () => {
    const filter: Filter = {
      op: 'or',
      filters: [
        { op: 'eq', field: 'name', value: 'Bob' },
        { op: 'in', field: 'age', values: [19] }
      ]
    }
    expect(where(filter)).toBe(fn(`${safe('name')}.eq("Bob").or(r.expr([19]).contains(${safe('age')}))`))
  })

  it('compiles $ne on the defaulted field, so missing fields match $ne of a value but not $ne: null', () => {
    expect(where({ op: 'ne', field: 'city', value: 'Rome' })).toBe(fn(`${safe('city')}.ne("Rome")`))
    expect(where({ op: 'ne', field: 'city', value: null })).toBe(fn(`${safe('city')}.ne(null)`))
  })

  it.each([
    ['lt', 'lt'],
    ['lte', 'le'],
    ['gt', 'gt'],
    ['gte', 'ge']
  ] as const)("guards $%s (%s) to values of the bound's type when the kinds are unknown", (op, reql) => {
    expect(where({ op, field: 'n', value: 5 })).toBe(fn(`${at('n')}.typeOf().eq("NUMBER").and(${at('n')}.${reql}(5))`))
    expect(where({ op, field: 'n', value: '5' })).toBe(
      fn(`${at('n')}.typeOf().eq("STRING").and(${at('n')}.${reql}("5"))`)
    )
    expect(where({ op, field: 'n', value: true })).toBe(
      fn(`${at('n')}.typeOf().eq("BOOL").and(${at('n')}.${reql}(true))`)
    )
  })

  it('compares a field of known kind without a guard', () => {
    expect(where({ op: 'gte', field: 'age', value: 30 }, typed)).toBe(fn(`${at('age')}.ge(30)`))
    expect(where({ op: 'lt', field: 'nick', value: 'm' }, typed)).toBe(fn(`${at('nick')}.lt("m")`))
    // A bound of another kind still needs the guard.
    expect(where({ op: 'lt', field: 'age', value: '30' }, typed)).toBe(
      fn(`${at('age')}.typeOf().eq("STRING").and(${at('age')}.lt("30"))`)
    )
  })

  it('keeps the guard where null, or a missing field read as null, would pass the comparison', () => {
    // null sorts below strings: it passes $lt but never $gt.
    expect(where({ op: 'lt', field: 'name', value: 'm' }, typed)).toBe(
      fn(`${at('name')}.typeOf().eq("STRING").and(${at('name')}.lt("m"))`)
    )
    expect(where({ op: 'gt', field: 'name', value: 'm' }, typed)).toBe(fn(`${at('name')}.gt("m")`))
    // Under $or an optional field reads as null when missing.
    const or = (field: string): Filter => ({
      op: 'or',
      filters: [
        { op: 'lt', field, value: 'm' },
        { op: 'eq', field: 'age', value: 1 }
      ]
    })
    expect(where(or('nick'), typed)).toBe(
      fn(`${safe('nick')}.typeOf().eq("STRING").and(${safe('nick')}.lt("m")).or(${safe('age')}.eq(1))`)
    )
    // address.city is required all the way down: never null, so no guard even under $or.
    expect(where(or('address.city'), typed)).not.toContain('eq("STRING")')
    expect(where({ op: 'lt', field: 'age', value: 5 }, typed)).toBe(fn(`${at('age')}.lt(5)`))
  })

  it('compiles a range against null to a predicate that matches nothing', () => {
    expect(where({ op: 'lt', field: 'n', value: null })).toBe(fn('false'))
  })

  it('compiles $in and $nin to a membership test, defaulting where null or negation needs it', () => {
    expect(where({ op: 'in', field: 'name', values: ['Alice', 'Bob'] })).toBe(
      fn(`r.expr(["Alice", "Bob"]).contains(${at('name')})`)
    )
    expect(where({ op: 'in', field: 'name', values: ['Alice', null] })).toBe(
      fn(`r.expr(["Alice", null]).contains(${safe('name')})`)
    )
    expect(where({ op: 'nin', field: 'name', values: ['Alice'] })).toBe(
      fn(`r.expr(["Alice"]).contains(${safe('name')}).not()`)
    )
    expect(where({ op: 'in', field: 'name', values: [] })).toBe(fn(`r.expr([]).contains(${at('name')})`))
  })

  it('compiles $search to an RE2 match, guarded to strings unless the field holds only strings', () => {
    expect(where({ op: 'search', field: 'name', pattern: '(?i)^ann' })).toBe(
      fn(`${at('name')}.typeOf().eq("STRING").and(${at('name')}.match("(?i)^ann").ne(null))`)
    )
    expect(where({ op: 'search', field: 'nick', pattern: 'x' }, typed)).toBe(fn(`${at('nick')}.match("x").ne(null)`))
    expect(where({ op: 'search', field: 'name', pattern: 'x' }, typed)).toContain('typeOf().eq("STRING")')
  })

  it('compiles $contains to a membership test, guarded to arrays unless the field holds only arrays', () => {
    expect(where({ op: 'contains', field: 'tags', value: 'red' })).toBe(
      fn(`${at('tags')}.typeOf().eq("ARRAY").and(${at('tags')}.contains("red"))`)
    )
    expect(where({ op: 'contains', field: 'tags', value: 'red' }, typed)).toBe(fn(`${at('tags')}.contains("red")`))
  })

  it('compiles nested $and and $or, flattening the top-level $and', () => {
    const filter: Filter = {
      op: 'and',
      filters: [
        { op: 'gt', field: 'age', value: 1 },
        {
          op: 'and',
          filters: [
            {
              op: 'or',
              filters: [
                { op: 'eq', field: 'name', value: 'Bob' },
                { op: 'lt', field: 'age', value: 19 }
              ]
            }
          ]
        }
      ]
    }
    expect(conjuncts(filter)).toHaveLength(2)
    expect(where(filter, typed)).toBe(fn(`${at('age')}.gt(1).and(${safe('name')}.eq("Bob").or(${safe('age')}.lt(19)))`))
  })

  it('compiles an empty $or to false and a single criterion to itself', () => {
    expect(where({ op: 'or', filters: [] })).toBe(fn('false'))
    expect(where({ op: 'or', filters: [{ op: 'ne', field: 'a', value: 1 }] })).toBe(fn(`${safe('a')}.ne(1)`))
  })

  it('builds a predicate for places that do not skip rows on errors, where every read defaults', () => {
    const term = r
      .expr({})
      .do((doc: RDatum) => typed.predicate({ op: 'gt', field: 'age', value: 3 })(doc))
      .toString()
    expect(term).toBe('r.expr({}).do((var_1) => var_1("age").default(null).gt(3))')
  })

  it('refuses an operator it does not know (exhaustive switch)', () => {
    expect(() => where({ op: 'regex', field: 'a', value: 1 } as unknown as Filter)).toThrow(/Unhandled query operator/)
  })
})

describe('sort, skip, limit and select', () => {
  const rankOf = (name: string): string =>
    `(var_1) => ${safe(name)}.do((var_2) => [r.expr({ NULL: 0, NUMBER: 1, STRING: 2, BOOL: 3, PTYPE<TIME>: 4, ARRAY: 5 })(var_2.typeOf()).default(6), var_2])`

  it('sorts by [type rank, value] when the kinds are unknown, in the key order of $sort', () => {
    const ordered = table
      .orderBy(
        ...untyped.orderings([
          ['age', -1],
          ['name', 1]
        ])
      )
      .toString()
    expect(ordered).toBe(`r.expr("items").table().orderBy(r.desc(${rankOf('age')}), r.asc(${rankOf('name')}))`)
  })

  it('sorts numbers, strings and null by their plain value (the same order in both adapters)', () => {
    expect(
      table
        .orderBy(
          ...typed.orderings([
            ['age', -1],
            ['name', 1]
          ])
        )
        .toString()
    ).toBe('r.expr("items").table().orderBy(r.desc("age"), r.asc("name"))')
    expect(table.orderBy(...typed.orderings([['address.city', 1]])).toString()).toContain(
      'r.asc((var_1) => var_1("address").default(null).do('
    )
    // Booleans sort before null in RethinkDB, after it in memory: ranked.
    expect(table.orderBy(...typed.orderings([['done', 1]])).toString()).toContain('PTYPE<TIME>')
  })

  it('applies sort, then skip, then limit, then select', () => {
    const term = untyped
      .page(table, query({ sort: [['name', 1]], skip: 2, limit: 3, select: ['name'] }), 'id')
      .toString()
    expect(term).toBe(`r.expr("items").table().orderBy(r.asc(${rankOf('name')})).skip(2).limit(3).pluck("name", "id")`)
  })

  it('adds nothing for an empty query, and keeps $limit 0', () => {
    expect(untyped.page(table, query({}), 'id')).toBe(table)
    expect(untyped.page(table, query({ limit: 0 }), 'id').toString()).toBe('r.expr("items").table().limit(0)')
  })

  it('always keeps the id in $select, once, under its configured name', () => {
    expect(selection(['name', 'age'], 'id')).toEqual(['name', 'age', 'id'])
    expect(selection(['_id', 'name'], '_id')).toEqual(['_id', 'name'])
    expect(selection([], 'customId')).toEqual(['customId'])
  })
})
