import { describe, expect, it } from '@jest/globals'
import { splitInsert } from '../../../src/infrastructure/rethinkdb/record-keys.js'

const added = (record: Record<string, unknown>) => ({ new_val: record, old_val: null })

describe('splitInsert', () => {
  it('gives each caller its records in its own order, generated keys in input order', () => {
    const result = {
      generated_keys: ['g1', 'g2', 'g3'],
      // The server may list changes in any order.
      changes: [
        added({ id: 'g3', n: 4 }),
        added({ id: 'x', n: 2 }),
        added({ id: 'g1', n: 1 }),
        added({ id: 'g2', n: 3 })
      ]
    }
    expect(splitInsert([[{ n: 1 }, { id: 'x', n: 2 }], [{ n: 3 }], [{ n: 4 }]], result, 'id')).toEqual([
      {
        created: [
          { id: 'g1', n: 1 },
          { id: 'x', n: 2 }
        ]
      },
      { created: [{ id: 'g2', n: 3 }] },
      { created: [{ id: 'g3', n: 4 }] }
    ])
  })

  it('fails only the caller whose record was refused, with its message and what of it went in', () => {
    const result = {
      first_error: 'Duplicate primary key `id`: a',
      changes: [
        added({ id: 'b', n: 1 }),
        { error: 'Duplicate primary key `id`: a', old_val: { id: 'a', n: 0 }, new_val: { id: 'a', n: 2 } },
        added({ id: 'c', n: 3 })
      ]
    }
    expect(
      splitInsert(
        [
          [
            { id: 'b', n: 1 },
            { id: 'a', n: 2 }
          ],
          [{ id: 'c', n: 3 }]
        ],
        result,
        'id'
      )
    ).toEqual([
      { created: [{ id: 'b', n: 1 }], error: 'Duplicate primary key `id`: a' },
      { created: [{ id: 'c', n: 3 }] }
    ])
  })

  it('of two callers inserting one key, the one whose record went in succeeds', () => {
    const result = {
      first_error: 'Duplicate primary key `id`: k',
      changes: [
        added({ id: 'k', n: 1 }),
        { error: 'Duplicate primary key `id`: k', old_val: { id: 'k', n: 1 }, new_val: { id: 'k', n: 2 } }
      ]
    }
    expect(splitInsert([[{ id: 'k', n: 2 }], [{ id: 'k', n: 1 }]], result, 'id')).toEqual([
      { created: [], error: 'Duplicate primary key `id`: k' },
      { created: [{ id: 'k', n: 1 }] }
    ])
    // Two equal records: one of the callers gets it, the other hears the key is taken.
    const same = {
      ...result,
      changes: [
        added({ id: 'k', n: 1 }),
        { error: 'Duplicate primary key `id`: k', old_val: { id: 'k', n: 1 }, new_val: { id: 'k', n: 1 } }
      ]
    }
    expect(splitInsert([[{ id: 'k', n: 1 }], [{ id: 'k', n: 1 }]], same, 'id')).toEqual([
      { created: [{ id: 'k', n: 1 }] },
      { created: [], error: 'Duplicate primary key `id`: k' }
    ])
  })

  it('falls back on the first error when a refused record cannot be told (no key in its change)', () => {
    expect(splitInsert([[{ n: 1 }]], { first_error: 'too big', changes: [] }, 'id')).toEqual([
      { created: [], error: 'too big' }
    ])
  })
})
