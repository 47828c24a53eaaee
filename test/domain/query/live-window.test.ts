import { describe, expect, it } from '@jest/globals'
import type { StoreQuery } from '../../../src/domain/query/ast.js'
import { compareValues, compileSort } from '../../../src/domain/query/compile-sort.js'
import { compileFilter } from '../../../src/domain/query/compile-filter.js'
import type { Doc } from '../../../src/domain/query/field-getter.js'
import { LiveWindow, applyChanges, diff } from '../../../src/domain/query/live-window.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'

const q = (raw: Record<string, unknown>): StoreQuery => parseQuery(raw)

/** What a fresh find answers: the matching records sorted by the query's keys and then by id, skipped and limited. */
function find(records: Map<number, Doc>, query: StoreQuery): Doc[] {
  const bySort = compileSort(query.sort)
  const matches = compileFilter(query.filter)
  const sorted = [...records.values()].filter(matches).sort((a, b) => bySort(a, b) || compareValues(a.id, b.id))
  return sorted.slice(query.skip, query.limit === undefined ? undefined : query.skip + query.limit)
}

/** The read a refill makes: sorted, `$skip` not applied, at most `readLimit` records. */
function read(records: Map<number, Doc>, window: LiveWindow): Doc[] {
  return find(records, { ...window.query, skip: 0, limit: window.readLimit })
}

describe('LiveWindow', () => {
  it('answers the first read as additions and keeps a top-N window through writes', () => {
    const records = new Map<number, Doc>([1, 2, 3, 4].map((id) => [id, { id, score: id * 10 }]))
    const window = new LiveWindow(q({ $sort: { score: -1 }, $limit: 2 }), 'id', 1)
    expect(window.reset(read(records, window))).toEqual([
      { type: 'added', record: { id: 4, score: 40 }, index: 0 },
      { type: 'added', record: { id: 3, score: 30 }, index: 1 }
    ])
    // A new leader pushes the last one out.
    const leader = { id: 5, score: 50 }
    expect(window.apply(5, leader).changes).toEqual([
      { type: 'removed', record: { id: 3, score: 30 }, oldIndex: 1 },
      { type: 'added', record: leader, index: 0 }
    ])
  })

  it('refills from its buffer when a record leaves, and asks for a read only when the buffer is dry', () => {
    const records = new Map<number, Doc>([1, 2, 3, 4].map((id) => [id, { id, score: id }]))
    const window = new LiveWindow(q({ $sort: { score: -1 }, $limit: 2 }), 'id', 1)
    window.reset(read(records, window))
    records.delete(4)
    const first = window.apply(4, undefined)
    expect(first.refill).toBe(false)
    expect(window.window().map((row) => row.id)).toEqual([3, 2])
    records.delete(3)
    const second = window.apply(3, undefined)
    expect(second.refill).toBe(true)
    expect(window.reset(read(records, window))).toEqual([{ type: 'added', record: { id: 1, score: 1 }, index: 1 }])
  })

  it('moves a record whose sort key changed, as one change with its old and new index', () => {
    const records = new Map<number, Doc>([1, 2, 3].map((id) => [id, { id, score: id }]))
    const window = new LiveWindow(q({ $sort: { score: 1 } }), 'id', 0)
    window.reset(read(records, window))
    expect(window.apply(3, { id: 3, score: 0 }).changes).toEqual([
      { type: 'changed', record: { id: 3, score: 0 }, index: 0, oldIndex: 2 }
    ])
  })

  it('agrees with a fresh find after every one of 20,000 random writes, over varied query shapes', () => {
    let seed = 20261206
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
    const shapes: Record<string, unknown>[] = [
      { $sort: { score: -1 }, $limit: 5 },
      { $sort: { score: 1 }, $limit: 3, $skip: 2 },
      { room: 'a', $sort: { score: -1, name: 1 }, $limit: 4 },
      { score: { $gte: 5 }, $sort: { name: 1 } },
      { $or: [{ room: 'b' }, { score: { $lt: 3 } }], $sort: { score: 1 }, $limit: 6, $skip: 1 },
      { room: { $in: ['a', 'c'] }, $limit: 2 }
    ]
    for (const shape of shapes) {
      const records = new Map<number, Doc>()
      const window = new LiveWindow(q(shape), 'id', 2)
      let copy: Doc[] = []
      copy = applyChanges(copy, window.reset(read(records, window)))
      for (let step = 0; step < 20_000 / shapes.length; step++) {
        const id = Math.floor(random() * 40)
        const removing = records.has(id) && random() < 0.3
        const record = removing
          ? undefined
          : { id, score: Math.floor(random() * 10), room: pick(['a', 'b', 'c']), name: pick(['x', 'y', 'z']) }
        if (record) records.set(id, record)
        else records.delete(id)
        const before = window.window()
        const { changes, refill } = window.apply(id, record)
        // The changes come from positions alone; they are the ones diff finds between the windows' records.
        const expectedChanges = diff(before, window.window(), 'id')
        if (JSON.stringify(changes) !== JSON.stringify(expectedChanges))
          expect([shape, step, changes]).toEqual([shape, step, expectedChanges])
        copy = applyChanges(copy, changes)
        if (refill) copy = applyChanges(copy, window.reset(read(records, window)))
        // Compared as text: toEqual on every step would be most of the test's time.
        const expected = JSON.stringify(find(records, window.query))
        if (JSON.stringify(window.window()) !== expected || JSON.stringify(copy) !== expected)
          expect([shape, step, window.window(), copy]).toEqual([
            shape,
            step,
            JSON.parse(expected),
            JSON.parse(expected)
          ])
      }
    }
  })
})

describe('diff', () => {
  it('turns any window into any other for a client applying the changes in order', () => {
    const row = (id: number, v = 0): Doc => ({ id, v })
    const before = [row(1), row(2), row(3), row(4)]
    const after = [row(4), row(2, 1), row(5), row(1)]
    expect(applyChanges(before, diff(before, after, 'id'))).toEqual(after)
  })
})
