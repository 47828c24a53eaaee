import { r, type RTable } from 'rethinkdb-ts'
import { beyond, keysetSort } from '../../../src/domain/query/cursor.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { JsonSchemaObject } from '../../../src/domain/schema/json-schema.js'
import type { Data } from '../../../src/domain/service/service.js'
import { shapesFromSchema } from '../../../src/domain/schema/field-shapes.js'
import { QueryPlanner } from '../../../src/infrastructure/rethinkdb/query-plan.js'
import { ReqlCompiler } from '../../../src/infrastructure/rethinkdb/reql-compiler.js'
import type { IndexSpec } from '../../../src/infrastructure/rethinkdb/rethinkdb-tables.js'

// Which way into the table each query takes, read from the term it compiles to. That the answers
// are the same with and without indexes is the store contract's job (store-indexes.contract.ts).

const MAX = '1.7976931348623157e+308'
const indexes: IndexSpec[] = [
  { name: 'city', fields: ['city'] },
  { name: 'age', fields: ['age'] },
  { name: 'score', fields: ['score'] },
  { name: 'zip', fields: ['address.zip'] },
  { name: 'city_score', fields: ['city', 'score'] },
  { name: 'city_age', fields: ['city', 'age'] }
]
/** Every record has a numeric id, age and score; city, name and zip may be anything or missing. */
const schema: JsonSchemaObject = {
  type: 'object',
  required: ['age', 'score'],
  properties: { id: { type: 'integer' }, age: { type: 'integer' }, score: { type: 'number' } }
}
const plannerFor = (withSchema: boolean, list = indexes): QueryPlanner => {
  const shapes = shapesFromSchema(withSchema ? schema : undefined, 'id')
  return new QueryPlanner(
    r,
    () => r.table('t') as unknown as RTable<Data>,
    new ReqlCompiler(r, shapes),
    shapes,
    'id',
    list
  )
}
const typed = plannerFor(true)
const untyped = plannerFor(false)
const find = (raw: Record<string, unknown>, planner = typed): string => planner.find(parseQuery(raw)).toString()
const matching = (raw: Record<string, unknown>, planner = typed): string =>
  planner.matching(parseQuery(raw).filter).toString()
const table = 'r.expr("t").table()'

describe('equality and $in', () => {
  it('looks up equality and $in (without repeated values) in an index', () => {
    expect(matching({ city: 'Rome' })).toBe(`${table}.getAll(r.args(["Rome"]), { index: "city" })`)
    expect(matching({ city: { $in: ['Rome', 'Oslo', 'Rome'] } })).toBe(
      `${table}.getAll(r.args(["Rome", "Oslo"]), { index: "city" })`
    )
    expect(matching({ 'address.zip': 7 })).toBe(`${table}.getAll(r.args([7]), { index: "zip" })`)
  })

  it('looks up the id field by primary key, whatever the indexes', () => {
    expect(matching({ id: { $in: [1, 2] }, city: 'Rome' })).toBe(
      `${table}.getAll(r.args([1, 2])).filter({ city: "Rome" })`
    )
  })

  it('filters what the index does not answer', () => {
    expect(matching({ city: 'Rome', name: { $ne: 'x' } })).toBe(
      `${table}.getAll(r.args(["Rome"]), { index: "city" }).filter((var_1) => var_1("name").default(null).ne("x"))`
    )
  })

  it('never looks up null (no index holds null or missing fields), nor objects', () => {
    expect(matching({ city: null })).not.toContain('getAll')
    expect(matching({ city: { $in: ['Rome', null] } })).not.toContain('getAll')
    expect(matching({ city: { a: 1 } })).not.toContain('getAll')
  })

  it('looks up every combination of equalities on a compound index, within a limit', () => {
    expect(matching({ city: { $in: ['Rome', 'Oslo'] }, score: 5 })).toBe(
      `${table}.getAll(r.args([["Rome", 5], ["Oslo", 5]]), { index: "city_score" })`
    )
    const many = Array.from({ length: 9 }, (_, n) => n)
    expect(matching({ city: { $in: many.map(String) }, score: { $in: many } })).toContain('{ index: "city" }')
  })
})

describe('ranges', () => {
  it('reads a range of numbers between bounds that hold every number and nothing else', () => {
    expect(matching({ age: { $gte: 30 } })).toBe(
      `${table}.between(30, ${MAX}, { index: "age", leftBound: "closed", rightBound: "closed" })`
    )
    expect(matching({ age: { $gt: 1, $lt: 30 } })).toBe(
      `${table}.between(1, 30, { index: "age", leftBound: "open", rightBound: "open" })`
    )
    expect(matching({ age: { $lte: 30 } })).toBe(
      `${table}.between(-${MAX}, 30, { index: "age", leftBound: "closed", rightBound: "closed" })`
    )
  })

  it('reads a range of strings up to the largest value (strings sort last)', () => {
    expect(matching({ city: { $gt: 'M' } })).toBe(
      `${table}.between("M", r.maxval, { index: "city", leftBound: "open", rightBound: "closed" })`
    )
    expect(matching({ city: { $lt: 'M' } })).toBe(
      `${table}.between("", "M", { index: "city", leftBound: "closed", rightBound: "open" })`
    )
  })

  it('keeps null and boolean bounds, and a second bound of another kind, to the filter', () => {
    expect(matching({ age: { $gt: true } })).not.toContain('between')
    expect(matching({ age: { $gt: 1, $lt: 'x' } })).toBe(
      `${table}.between(1, ${MAX}, { index: "age", leftBound: "open", rightBound: "closed" }).filter((var_1) => var_1("age").typeOf().eq("STRING").and(var_1("age").lt("x")))`
    )
  })

  it('reads a compound index with equality on its first fields and a range on the next', () => {
    expect(matching({ city: 'Rome', age: { $lt: 30 } })).toBe(
      `${table}.between(["Rome", -${MAX}], ["Rome", 30], { index: "city_age", leftBound: "closed", rightBound: "open" })`
    )
  })

  it('reads a compound index by its first fields only when every record holds the others', () => {
    const cityName = plannerFor(true, [
      { name: 'city_name', fields: ['city', 'name'] },
      { name: 'city_score', fields: ['city', 'score'] }
    ])
    expect(matching({ city: 'Rome' }, cityName)).toBe(
      `${table}.between(["Rome", r.minval], ["Rome", r.maxval], { index: "city_score", leftBound: "closed", rightBound: "closed" })`
    )
    expect(matching({ city: 'Rome' }, plannerFor(false, [{ name: 'city_score', fields: ['city', 'score'] }]))).toBe(
      `${table}.filter({ city: "Rome" })`
    )
  })
})

describe('sorting from an index', () => {
  it('reads the index in sort order when every record holds a number or string there, and stops at the limit', () => {
    expect(find({ $sort: { score: -1, id: -1 }, $limit: 5 })).toBe(
      `${table}.orderBy({ index: r.desc("score") }).limit(5)`
    )
    expect(find({ name: 'x', $sort: { score: 1 }, $skip: 2, $limit: 5 })).toBe(
      `${table}.orderBy({ index: r.asc("score") }).filter({ name: "x" }).skip(2).limit(5)`
    )
  })

  it('takes ties of the index in primary-key order, in the direction it is read', () => {
    expect(find({ $sort: { score: -1, id: -1, name: 1 }, $limit: 5 })).toBe(
      `${table}.orderBy({ index: r.desc("score") }).limit(5)`
    )
    expect(find({ $sort: { score: -1, id: 1 }, $limit: 5 })).toContain('.do(')
  })

  it('breaks ties of a sort without the id by the id, ascending, as the other stores and live windows do', () => {
    // Read descending, the index gives ties in descending key order: the tied rows are sorted again.
    expect(find({ $sort: { score: -1 }, $limit: 5 })).toContain('.orderBy(r.desc("score"), r.asc("id")).limit(5)')
    expect(find({ $sort: { score: 1 }, $limit: 5 })).toBe(`${table}.orderBy({ index: r.asc("score") }).limit(5)`)
    expect(find({ city: 'Rome', $sort: { city: 1 } })).toContain('.orderBy(r.asc("id"))')
  })

  it('reads a compound index under equality on its first fields, dropping sort keys the filter fixes', () => {
    expect(find({ city: 'Paris', $sort: { city: -1, score: 1, id: 1 }, $limit: 25 })).toBe(
      `${table}.between(["Paris", r.minval], ["Paris", r.maxval], { index: "city_score", leftBound: "closed", rightBound: "closed" }).orderBy({ index: r.asc("city_score") }).limit(25)`
    )
  })

  it('sorts the records that tie on the index value by the other keys, in the same round trip', () => {
    const term = find({ age: { $gte: 30 }, city: { $in: ['Rome', 'Oslo'] }, $sort: { age: -1, name: 1 }, $limit: 10 })
    expect(term).toMatch(
      /^r\.expr\("t"\)\.table\(\)\.between\(30, .*\.orderBy\(\{ index: r\.desc\("age"\) \}\)\.filter\(/
    )
    expect(term).toContain('.limit(10).coerceTo("array").do(')
    expect(term).toContain('getAll(var_2("age"), { index: "age" })')
  })

  it('sorts without an index where an index would leave records out or order kinds differently', () => {
    // Unknown kinds: missing or null ages would be left out, booleans would come first.
    expect(find({ $sort: { city: 1 }, $limit: 5 })).not.toContain('index: r.asc')
    expect(find({ $sort: { age: 1 }, $limit: 5 }, untyped)).not.toContain('index: r.asc')
    // ...unless the filter holds the sorted field to numbers.
    expect(find({ age: { $gt: 0 }, $sort: { age: 1 }, $limit: 5 }, untyped)).toContain(
      'orderBy({ index: r.asc("age") })'
    )
    // Without a limit nothing stops early: the filter's index, then a sort.
    expect(find({ $sort: { score: 1 } })).toBe(`${table}.orderBy(r.asc("score"), r.asc("id"))`)
  })

  it('reads the primary key in order for a sort by id with a limit that no other index narrows or orders', () => {
    // Without it, the whole table is read and sorted to answer a top-N (a live query's window, a chat's latest).
    expect(find({ name: 'x', $sort: { id: -1 }, $limit: 5 })).toBe(
      `${table}.orderBy({ index: r.desc("id") }).filter({ name: "x" }).limit(5)`
    )
    expect(find({ id: { $gt: 7 }, $sort: { id: 1 }, $limit: 5 })).toBe(
      `${table}.between(7, ${MAX}, { index: "id", leftBound: "open", rightBound: "closed" }).orderBy({ index: r.asc("id") }).limit(5)`
    )
    // An index that narrows the rows still wins; an unknown id kind, or no limit, is sorted as before.
    expect(find({ city: 'Rome', $sort: { id: -1 }, $limit: 5 })).toContain(
      'getAll(r.args(["Rome"]), { index: "city" })'
    )
    expect(find({ $sort: { id: -1 }, $limit: 5 }, untyped)).not.toContain('index: r.desc')
    expect(find({ name: 'x', $sort: { id: -1 } })).not.toContain('index: r.desc')
  })

  it('prefers an equality lookup to reading a whole index in order', () => {
    expect(
      find(
        { city: 'Rome', $sort: { age: 1 }, $limit: 5 },
        plannerFor(
          true,
          indexes.filter((index) => index.name !== 'city_age')
        )
      )
    ).toBe(`${table}.getAll(r.args(["Rome"]), { index: "city" }).orderBy(r.asc("age"), r.asc("id")).limit(5)`)
  })
})

describe('cursor pages', () => {
  /** The store query of a cursor page after the record with `score` and `id`, as AdapterService builds it. */
  const page = (direction: 1 | -1, score: number, id: number) => {
    const sort = keysetSort(parseQuery({ $sort: { score: direction, id: direction } }).sort, 'id')
    return { ...parseQuery({ $limit: 26 }), filter: beyond([score, id], sort, true, 'id'), sort }
  }

  it('read upward from the position through the index, stopping at the limit', () => {
    expect(typed.find(page(1, 24.5, 7)).toString()).toMatch(
      new RegExp(`^${escape(`${table}.between(24.5, ${MAX}`)}.*orderBy\\({ index: r.asc\\("score"\\) }\\)\\.filter`)
    )
  })

  it('read downward through the index when the schema says the key is never null, else scan', () => {
    expect(typed.find(page(-1, 24.5, 7)).toString()).toMatch(
      new RegExp(`^${escape(`${table}.between(-${MAX}, 24.5`)}.*orderBy\\({ index: r.desc\\("score"\\) }\\)\\.filter`)
    )
    // Null and missing scores come last downward and are in no index.
    expect(untyped.find(page(-1, 24.5, 7)).toString()).not.toContain('between')
  })
})

describe('cursor pages on a compound index of the sort keys and the id', () => {
  const planner = plannerFor(true, [...indexes, { name: 'score_id', fields: ['score', 'id'] }])
  const page = (direction: 1 | -1) => {
    const sort = keysetSort(parseQuery({ $sort: { score: direction, id: direction } }).sort, 'id')
    return { ...parseQuery({ $limit: 26 }), filter: beyond([24.5, 7], sort, true, 'id'), sort }
  }

  it('start from the index on the first key alone when one is declared too, whatever the order declared', () => {
    // Both serve the sort (ties of an index come in primary-key order); the one-field index costs less per row.
    const first = `${table}.orderBy({ index: r.asc("score") }).limit(26)`
    expect(planner.find({ ...parseQuery({ $limit: 26 }), sort: page(1).sort }).toString()).toBe(first)
    const compoundFirst = plannerFor(true, [{ name: 'score_id', fields: ['score', 'id'] }, ...indexes])
    expect(compoundFirst.find({ ...parseQuery({ $limit: 26 }), sort: page(1).sort }).toString()).toBe(first)
    const compoundOnly = plannerFor(true, [{ name: 'score_id', fields: ['score', 'id'] }])
    expect(compoundOnly.find({ ...parseQuery({ $limit: 26 }), sort: page(1).sort }).toString()).toBe(
      `${table}.orderBy({ index: r.asc("score_id") }).limit(26)`
    )
  })

  it('read one range from the position, with no filter on the rows', () => {
    expect(planner.find(page(1)).toString()).toBe(
      `${table}.between([24.5, 7], [r.maxval, r.maxval], { index: "score_id", leftBound: "open", ` +
        `rightBound: "closed" }).orderBy({ index: r.asc("score_id") }).limit(26)`
    )
    expect(planner.find(page(-1)).toString()).toBe(
      `${table}.between([r.minval, r.minval], [24.5, 7], { index: "score_id", leftBound: "closed", ` +
        `rightBound: "open" }).orderBy({ index: r.desc("score_id") }).limit(26)`
    )
  })

  it('keep the filter when the position does not hold the keys declared types', () => {
    const sort = keysetSort(parseQuery({ $sort: { score: 1, id: 1 } }).sort, 'id')
    const forged = { ...parseQuery({ $limit: 26 }), filter: beyond(['x', 7], sort, true, 'id'), sort }
    expect(planner.find(forged).toString()).not.toContain('score_id')
  })
})

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
