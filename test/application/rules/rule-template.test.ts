import { describe, expect, it } from '@jest/globals'
import type { Filter, Value } from '../../../src/domain/query/ast.js'
import { compileFilter } from '../../../src/domain/query/compile-filter.js'
import {
  compileUserIds,
  includes,
  templateOf,
  UnsolvedFilter,
  USER_ID
} from '../../../src/application/rules/rule-template.js'
import { random } from './no-leaks.js'

/** The filter with the template's placeholder replaced by one user's id: what that user's own rules say. */
function instantiate(value: unknown, id: unknown): any {
  if (value === USER_ID) return id
  if (Array.isArray(value)) return value.map((item) => instantiate(item, id))
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, instantiate(item, id)]))
  return value
}

const IDS: Value[] = [1, 2, 3, '1', null]
const FIELDS = ['ownerId', 'to', 'tags', 'nested.owner']

function randomFilter(r: ReturnType<typeof random>, depth = 0): Filter {
  if (depth < 2 && r.next() < 0.3)
    return { op: r.pick(['and', 'or'] as const), filters: [randomFilter(r, depth + 1), randomFilter(r, depth + 1)] }
  const field = r.pick(FIELDS)
  const value = (): Value => (r.next() < 0.5 ? USER_ID : r.pick(IDS))
  const op = r.pick(['eq', 'ne', 'in', 'nin', 'contains'] as const)
  if (op === 'in' || op === 'nin') return { op, field, values: [value(), value()] }
  return { op, field, value: value() }
}

function randomRecord(r: ReturnType<typeof random>): Record<string, unknown> {
  const record: Record<string, unknown> = {}
  for (const field of ['ownerId', 'to']) if (r.next() < 0.8) record[field] = r.pick(IDS)
  if (r.next() < 0.7) record.tags = r.some([1, 2, 3, '1'])
  if (r.next() < 0.5) record.nested = { owner: r.pick(IDS) }
  return record
}

describe('rule templates', () => {
  it('decide for every user id at once exactly what each user’s own filter decides (20,000 random cases)', () => {
    const r = random(20_251_207)
    let users = 0
    for (let trial = 0; trial < 2_000; trial++) {
      const filter = randomFilter(r)
      const solve = compileUserIds(filter)
      for (let n = 0; n < 10; n++) {
        const record = randomRecord(r)
        const ids = solve(record)
        for (const id of [1, 2, 3, '1', 'x']) {
          const own = compileFilter(instantiate(filter, id) as Filter)(record)
          if (includes(ids, id) !== own)
            throw new Error(`${JSON.stringify(filter)} on ${JSON.stringify(record)} for ${JSON.stringify(id)}`)
          users++
        }
      }
    }
    expect(users).toBe(100_000)
  })

  it('leave a range on the user’s id to each user’s own rules', () => {
    expect(() => compileUserIds({ op: 'lt', field: 'level', value: USER_ID })).toThrow(UnsolvedFilter)
  })

  it('share a key between users whose rules differ only in their id, and keep other values', () => {
    const rules = (id: number) => [
      { action: 'read', subject: 'messages', conditions: { $or: [{ userId: id }, { to: { $in: [id, 7] } }] } },
      { action: 'read', subject: 'messages', conditions: { level: 1 } }
    ]
    expect(templateOf(rules(3) as never, 3).key).toBe(templateOf(rules(4) as never, 4).key)
    // User 1's `level: 1` is templated too: only users whose level condition is their own id share that key.
    expect(templateOf(rules(1) as never, 1).key).not.toBe(templateOf(rules(3) as never, 3).key)
    expect(templateOf(rules(3) as never, 3).rules[1]).toEqual(rules(3)[1])
  })
})
