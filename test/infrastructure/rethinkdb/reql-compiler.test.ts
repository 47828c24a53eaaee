import { r, type RDatum } from 'rethinkdb-ts'
import { MATCH_ALL, type Filter, type StoreQuery } from '../../../src/domain/query/ast.js'
import { applyFilter, applyPage, compileFilter, compileSort, field, selection } from '../../../src/infrastructure/rethinkdb/reql-compiler.js'

// Building ReQL terms needs no connection: these tests read the term each query compiles to
// (rethinkdb-ts prints terms in JavaScript syntax; the variable names are renumbered per term).

const table = r.table('items')
const where = (filter: Filter): string => table.filter(compileFilter(r, filter)).toString()
const predicate = (body: string): string => `r.expr("items").table().filter((var_1) => ${body})`
const at = (name: string): string => `var_1("${name}").default(null)`
const query = (overrides: Partial<StoreQuery>): StoreQuery => ({ filter: MATCH_ALL, sort: [], skip: 0, ...overrides })

describe('field access', () => {
  const read = (path: string): string => r.expr({}).do((doc: RDatum) => field(r, doc, path)).toString()

  it('reads a missing top-level field as null', () => {
    expect(read('name')).toBe('r.expr({}).do((var_1) => var_1("name").default(null))')
  })

  it('reads a dotted name as a path into nested objects, null through non-objects', () => {
    expect(read('address.city')).toBe(
      'r.expr({}).do((var_1) => var_1("address").default(null)' +
      '.do((var_2) => var_2.typeOf().eq("OBJECT").branch(var_2("city").default(null), null)))'
    )
  })
})

describe('filter operators', () => {
  it('compiles equality with null so that it also matches missing fields', () => {
    expect(where({ op: 'eq', field: 'city', value: null })).toBe(predicate(`${at('city')}.eq(null)`))
  })

  it('compiles equality with strings, numbers, booleans and objects', () => {
    expect(where({ op: 'eq', field: 'name', value: 'Alice' })).toBe(predicate(`${at('name')}.eq("Alice")`))
    expect(where({ op: 'eq', field: 'age', value: 19 })).toBe(predicate(`${at('age')}.eq(19)`))
    expect(where({ op: 'eq', field: 'done', value: false })).toBe(predicate(`${at('done')}.eq(false)`))
    expect(where({ op: 'eq', field: 'tags', value: { a: [1, 'x'] } })).toBe(predicate(`${at('tags')}.eq({ a: [1, "x"] })`))
  })

  it('compiles $ne on the defaulted field, so missing fields match $ne of a value but not $ne: null', () => {
    expect(where({ op: 'ne', field: 'city', value: 'Rome' })).toBe(predicate(`${at('city')}.ne("Rome")`))
    expect(where({ op: 'ne', field: 'city', value: null })).toBe(predicate(`${at('city')}.ne(null)`))
  })

  it.each([
    ['lt', 'lt'],
    ['lte', 'le'],
    ['gt', 'gt'],
    ['gte', 'ge']
  ] as const)('compiles $%s to %s, guarded to values of the same type', (op, reql) => {
    expect(where({ op, field: 'n', value: 5 })).toBe(predicate(`${at('n')}.typeOf().eq("NUMBER").and(${at('n')}.${reql}(5))`))
    expect(where({ op, field: 'n', value: '5' })).toBe(predicate(`${at('n')}.typeOf().eq("STRING").and(${at('n')}.${reql}("5"))`))
    expect(where({ op, field: 'n', value: true })).toBe(predicate(`${at('n')}.typeOf().eq("BOOL").and(${at('n')}.${reql}(true))`))
  })

  it('compiles a range against null to a predicate that matches nothing', () => {
    expect(where({ op: 'lt', field: 'n', value: null })).toBe(predicate('false'))
  })

  it('compiles $in and $nin to a membership test of the defaulted field', () => {
    expect(where({ op: 'in', field: 'name', values: ['Alice', 'Bob'] })).toBe(predicate(`r.expr(["Alice", "Bob"]).contains(${at('name')})`))
    expect(where({ op: 'nin', field: 'name', values: ['Alice', null] })).toBe(predicate(`r.expr(["Alice", null]).contains(${at('name')}).not()`))
    expect(where({ op: 'in', field: 'name', values: [] })).toBe(predicate(`r.expr([]).contains(${at('name')})`))
  })

  it('compiles $search to an RE2 match on string values only', () => {
    expect(where({ op: 'search', field: 'name', pattern: '(?i)^ann' })).toBe(
      predicate(`${at('name')}.typeOf().eq("STRING").and(${at('name')}.match("(?i)^ann").ne(null))`)
    )
  })

  it('compiles $contains to a membership test on array values only', () => {
    expect(where({ op: 'contains', field: 'tags', value: 'red' })).toBe(
      predicate(`${at('tags')}.typeOf().eq("ARRAY").and(${at('tags')}.contains("red"))`)
    )
  })

  it('compiles $and and $or, nested', () => {
    const filter: Filter = {
      op: 'and',
      filters: [
        { op: 'eq', field: 'created', value: true },
        { op: 'or', filters: [{ op: 'eq', field: 'name', value: 'Bob' }, { op: 'eq', field: 'age', value: 19 }] }
      ]
    }
    expect(where(filter)).toBe(predicate(`${at('created')}.eq(true).and(${at('name')}.eq("Bob").or(${at('age')}.eq(19)))`))
  })

  it('compiles an empty $and to true, an empty $or to false and a single criterion to itself', () => {
    expect(where({ op: 'and', filters: [] })).toBe(predicate('true'))
    expect(where({ op: 'or', filters: [] })).toBe(predicate('false'))
    expect(where({ op: 'or', filters: [{ op: 'eq', field: 'a', value: 1 }] })).toBe(predicate(`${at('a')}.eq(1)`))
  })

  it('refuses an operator it does not know (exhaustive switch)', () => {
    expect(() => where({ op: 'regex', field: 'a', value: 1 } as unknown as Filter)).toThrow(/Unhandled query operator/)
  })

  it('leaves the sequence alone when the filter matches everything', () => {
    expect(applyFilter(r, table, MATCH_ALL)).toBe(table)
    expect(applyFilter(r, table, { op: 'eq', field: 'a', value: 1 }).toString()).toBe(predicate(`${at('a')}.eq(1)`))
  })
})

describe('sort, skip, limit and select', () => {
  const rankOf = (name: string): string =>
    `(var_1) => ${at(name)}.do((var_2) => [r.expr({ NULL: 0, NUMBER: 1, STRING: 2, BOOL: 3, PTYPE<TIME>: 4, ARRAY: 5 })(var_2.typeOf()).default(6), var_2])`

  it('sorts by [type rank, value] in the key order of $sort, with each direction', () => {
    const ordered = table.orderBy(...compileSort(r, [['age', -1], ['name', 1]])).toString()
    expect(ordered).toBe(`r.expr("items").table().orderBy(r.desc(${rankOf('age')}), r.asc(${rankOf('name')}))`)
  })

  it('applies sort, then skip, then limit, then select', () => {
    const term = applyPage(r, table, query({ sort: [['name', 1]], skip: 2, limit: 3, select: ['name'] }), 'id').toString()
    expect(term).toBe(`r.expr("items").table().orderBy(r.asc(${rankOf('name')})).skip(2).limit(3).pluck("name", "id")`)
  })

  it('adds nothing for an empty query, and keeps $limit 0', () => {
    expect(applyPage(r, table, query({}), 'id')).toBe(table)
    expect(applyPage(r, table, query({ limit: 0 }), 'id').toString()).toBe('r.expr("items").table().limit(0)')
  })

  it('always keeps the id in $select, once, under its configured name', () => {
    expect(selection(['name', 'age'], 'id')).toEqual(['name', 'age', 'id'])
    expect(selection(['_id', 'name'], '_id')).toEqual(['_id', 'name'])
    expect(selection([], 'customId')).toEqual(['customId'])
  })

  it('builds the page query of total and data in one term', () => {
    const filtered = applyFilter(r, table, { op: 'eq', field: 'a', value: 1 })
    const term = r.expr({ total: filtered.count(), data: applyPage(r, filtered, query({ limit: 2 }), 'id').coerceTo('array') })
    expect(term.toString()).toBe(
      `r.expr({ total: ${predicate(`${at('a')}.eq(1)`)}.count(), data: ${predicate(`${at('a')}.eq(1)`)}.limit(2).coerceTo("array") })`
    )
  })
})
