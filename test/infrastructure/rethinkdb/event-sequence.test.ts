import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals'
import { EventSequence } from '../../../src/infrastructure/rethinkdb/event-sequence.js'

interface Row {
  id: number
}

function sequence(gapMs = 100) {
  const released: string[] = []
  const skipped: [number, number][] = []
  const seq = new EventSequence<Row>({
    gapMs,
    release: (entry, late) => released.push(late ? `${entry.id}!` : String(entry.id)),
    skipped: (from, to) => skipped.push([from, to])
  })
  return { seq, released, skipped }
}

const add = (seq: EventSequence<Row>, ...ids: number[]) => {
  for (const id of ids) seq.add({ id })
}

describe('EventSequence', () => {
  beforeEach(() => {
    jest.useFakeTimers()
  })
  afterEach(() => {
    jest.useRealTimers()
  })

  it('hands out nothing before its start, then the numbers after the starting point in order', () => {
    const { seq, released } = sequence()
    add(seq, 1)
    expect(seq.position).toBeUndefined()
    seq.startAfter(10)
    expect(seq.position).toBe(10)
    add(seq, 10, 13, 11, 12, 14)
    expect(released).toEqual(['11', '12', '13', '14'])
    expect(seq.position).toBe(14)
  })

  it('hands out each number once across re-opened cursors that replay what was already seen', () => {
    const { seq, released } = sequence()
    seq.startAfter(0)
    seq.setLive(true)
    add(seq, 1, 2)
    seq.setLive(false)
    // The next cursor starts at 3 but the server may still send rows of the previous one.
    add(seq, 2, 5, 3, 4, 1, 3)
    seq.setLive(true)
    add(seq, 6)
    expect(released).toEqual(['1', '2', '3', '4', '5', '6'])
  })

  it('holds later numbers while one is missing, and gives it up only after the gap time while live', () => {
    const { seq, released, skipped } = sequence(100)
    seq.startAfter(0)
    add(seq, 2, 3)
    // Initial rows may still bring 1: no timer runs before the cursor is live.
    jest.advanceTimersByTime(1_000)
    expect(released).toEqual([])
    seq.setLive(true)
    jest.advanceTimersByTime(99)
    expect(released).toEqual([])
    jest.advanceTimersByTime(1)
    expect(skipped).toEqual([[1, 1]])
    expect(released).toEqual(['2', '3'])
    // The given-up event still comes: once, late.
    add(seq, 1, 1)
    expect(released).toEqual(['2', '3', '1!'])
  })

  it('an event that arrives in time fills its gap and cancels the timer', () => {
    const { seq, released, skipped } = sequence(100)
    seq.startAfter(0)
    seq.setLive(true)
    add(seq, 2)
    jest.advanceTimersByTime(50)
    add(seq, 1)
    jest.advanceTimersByTime(500)
    expect(released).toEqual(['1', '2'])
    expect(skipped).toEqual([])
  })

  it('gives up one gap at a time and keeps the order of what is held after it', () => {
    const { seq, released, skipped } = sequence(100)
    seq.startAfter(0)
    seq.setLive(true)
    add(seq, 3, 6)
    jest.advanceTimersByTime(100)
    expect(released).toEqual(['3'])
    jest.advanceTimersByTime(100)
    expect(skipped).toEqual([
      [1, 2],
      [4, 5]
    ])
    expect(released).toEqual(['3', '6'])
  })

  it('a lost cursor stops the gap timer; reset forgets the starting point', () => {
    const { seq, released } = sequence(100)
    seq.startAfter(0)
    seq.setLive(true)
    add(seq, 2)
    seq.setLive(false)
    jest.advanceTimersByTime(1_000)
    expect(released).toEqual([])
    seq.reset()
    expect(seq.started).toBe(false)
    add(seq, 1)
    expect(released).toEqual([])
  })

  it('a row holding several numbers is handed out whole and moves the position past all of them', () => {
    const released: string[] = []
    const skipped: [number, number][] = []
    const seq = new EventSequence<{ id: number; count: number }>({
      gapMs: 100,
      span: (row) => row.count,
      release: (row, late) => released.push(`${row.id}+${row.count}${late ? '!' : ''}`),
      skipped: (from, to) => skipped.push([from, to])
    })
    seq.startAfter(0)
    seq.setLive(true)
    // Rows 1–3 and 4, then 7–8 before 5–6 (committed in another order): each once, in number order.
    seq.add({ id: 4, count: 1 })
    seq.add({ id: 1, count: 3 })
    seq.add({ id: 7, count: 2 })
    expect(released).toEqual(['1+3', '4+1'])
    expect(seq.position).toBe(4)
    seq.add({ id: 5, count: 2 })
    seq.add({ id: 1, count: 3 })
    expect(released).toEqual(['1+3', '4+1', '5+2', '7+2'])
    expect(seq.position).toBe(8)
    // A row that never comes is given up as the whole range before the next one; if it comes later, it is late.
    expect(seq.holding).toBe(false)
    seq.add({ id: 12, count: 1 })
    // Held behind the missing 9–11: a table change the log has not brought yet may still come through it.
    expect(seq.holding).toBe(true)
    jest.advanceTimersByTime(100)
    expect(seq.holding).toBe(false)
    expect(skipped).toEqual([[9, 11]])
    seq.add({ id: 9, count: 3 })
    expect(released.slice(4)).toEqual(['12+1', '9+3!'])
    expect(seq.position).toBe(12)
  })
})
