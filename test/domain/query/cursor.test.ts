import { describe, expect, it } from '@jest/globals'
import { BadRequest } from '../../../src/domain/errors/errors.js'
import type { StoreQuery } from '../../../src/domain/query/ast.js'
import {
  beyond,
  decodeCursor,
  encodeCursor,
  fingerprint,
  keysetSort,
  selectForCursor,
  takeCursorParameters
} from '../../../src/domain/query/cursor.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'

const sort = keysetSort([['createdAt', -1]], 'id')
const print = fingerprint(parseQuery({ roomId: 'r1' }).filter, sort)

function refused(run: () => unknown, message: RegExp): void {
  let caught: unknown
  try {
    run()
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(BadRequest)
  expect((caught as Error).message).toMatch(message)
}

describe('cursors', () => {
  it('break ties by the id unless the sort names it', () => {
    expect(sort).toEqual([
      ['createdAt', -1],
      ['id', 1]
    ])
    expect(keysetSort([['id', -1]], 'id')).toEqual([['id', -1]])
  })

  it('round-trip the position of a record: its sort keys, missing ones as null, then its id', () => {
    const cursor = encodeCursor({ id: 'a7', createdAt: 1700, text: 'hi' }, sort, print)
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[0-9a-f]{16}$/)
    expect(decodeCursor(cursor, sort, print)).toEqual([1700, 'a7'])
    expect(decodeCursor(encodeCursor({ id: 3, x: 'é' }, sort, print), sort, print)).toEqual([null, 3])
    const nested = keysetSort([['author.name', 1]], 'id')
    expect(decodeCursor(encodeCursor({ id: 1, author: { name: 'Zoé' } }, nested, print), nested, print)).toEqual([
      'Zoé',
      1
    ])
  })

  it('refuse an edited cursor: any changed character, a cut, or something else entirely', () => {
    const cursor = encodeCursor({ id: 'a7', createdAt: 1700 }, sort, print)
    for (let index = 0; index < cursor.length; index++) {
      const swapped = cursor[index] === 'A' ? 'B' : 'A'
      const edited = cursor.slice(0, index) + swapped + cursor.slice(index + 1)
      refused(() => decodeCursor(edited, sort, print), /^Invalid cursor/)
    }
    refused(() => decodeCursor(cursor.slice(0, -1), sort, print), /malformed or was modified/)
    refused(() => decodeCursor('not a cursor', sort, print), /malformed or was modified/)
    refused(() => decodeCursor('', sort, print), /malformed or was modified/)
  })

  it('refuse a cursor of another query or another sort, naming the problem', () => {
    const cursor = encodeCursor({ id: 'a7', createdAt: 1700 }, sort, print)
    const other = fingerprint(parseQuery({ roomId: 'r2' }).filter, sort)
    refused(() => decodeCursor(cursor, sort, other), /made for another query or \$sort/)
    const ascending = keysetSort([['createdAt', 1]], 'id')
    refused(
      () => decodeCursor(cursor, ascending, fingerprint(parseQuery({ roomId: 'r1' }).filter, ascending)),
      /made for another query or \$sort/
    )
  })

  it('cannot name a position in a field holding an object or an array', () => {
    refused(() => encodeCursor({ id: 1, createdAt: [1] }, sort, print), /over 'createdAt': it holds an object/)
  })

  it('take $after, $before and $count off the query, and check them', () => {
    expect(takeCursorParameters({ a: 1, $limit: 2 })).toEqual({
      query: { a: 1, $limit: 2 },
      cursor: { count: true, requested: false }
    })
    expect(takeCursorParameters({ a: 1, $after: 'c', $count: 'false' })).toEqual({
      query: { a: 1 },
      cursor: { after: 'c', count: false, requested: true }
    })
    expect(takeCursorParameters({ $after: '', $skip: '20' }).cursor.after).toBe('')
    refused(() => takeCursorParameters({ $after: 'c', $skip: 10 }), /\$skip cannot be combined with a cursor/)
    refused(() => takeCursorParameters({ $after: 'c', $before: 'd' }), /either \$after or \$before/)
    refused(() => takeCursorParameters({ $after: 5 }), /Invalid \$after/)
    refused(() => takeCursorParameters({ $count: 'maybe' }), /Invalid \$count/)
  })

  it('select the top-level fields a cursor needs, besides those asked for', () => {
    expect(selectForCursor(undefined, sort)).toBeUndefined()
    expect(selectForCursor(['text'], keysetSort([['author.name', 1]], 'id'))).toEqual(['text', 'author', 'id'])
  })

  describe('the records beyond a position', () => {
    const twoKeys: StoreQuery['sort'] = [
      ['rank', 1],
      ['id', 1]
    ]

    it('are a chain of ranges, with a range on the first key alone when it runs upward', () => {
      expect(beyond([3, 'k'], twoKeys, true, 'id')).toEqual({
        op: 'and',
        filters: [
          { op: 'gte', field: 'rank', value: 3 },
          {
            op: 'or',
            filters: [
              { op: 'gt', field: 'rank', value: 3 },
              {
                op: 'and',
                filters: [
                  { op: 'eq', field: 'rank', value: 3 },
                  { op: 'gt', field: 'id', value: 'k' }
                ]
              }
            ]
          }
        ]
      })
    })

    it('rank null and missing values first: lower keys come after a value downward, any value after null upward', () => {
      // Downward, the first key's bound alone is "at most the value, or null".
      expect(beyond([3, 'k'], twoKeys, false, 'id')).toEqual({
        op: 'and',
        filters: [
          {
            op: 'or',
            filters: [
              { op: 'lte', field: 'rank', value: 3 },
              { op: 'eq', field: 'rank', value: null }
            ]
          },
          {
            op: 'or',
            filters: [
              {
                op: 'or',
                filters: [
                  { op: 'lt', field: 'rank', value: 3 },
                  { op: 'eq', field: 'rank', value: null }
                ]
              },
              {
                op: 'and',
                filters: [
                  { op: 'eq', field: 'rank', value: 3 },
                  { op: 'lt', field: 'id', value: 'k' }
                ]
              }
            ]
          }
        ]
      })
      // The id is never null: downward by id alone, its bound is a plain range.
      expect(beyond(['k'], [['id', -1]], true, 'id')).toEqual({
        op: 'and',
        filters: [
          { op: 'lte', field: 'id', value: 'k' },
          { op: 'lt', field: 'id', value: 'k' }
        ]
      })
      expect(beyond([null, 'k'], twoKeys, true, 'id')).toEqual({
        op: 'or',
        filters: [
          { op: 'ne', field: 'rank', value: null },
          {
            op: 'and',
            filters: [
              { op: 'eq', field: 'rank', value: null },
              { op: 'gt', field: 'id', value: 'k' }
            ]
          }
        ]
      })
      // Nothing sorts before null: only the ties on it remain.
      expect(beyond([null, 'k'], twoKeys, false, 'id')).toEqual({
        op: 'and',
        filters: [
          { op: 'eq', field: 'rank', value: null },
          { op: 'lt', field: 'id', value: 'k' }
        ]
      })
    })
  })
})
