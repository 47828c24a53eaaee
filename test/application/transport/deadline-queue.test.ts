import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals'
import { DeadlineQueue } from '../../../src/application/transport/deadline-queue.js'

describe('DeadlineQueue', () => {
  const clock = { now: () => Date.now() }
  let fired: string[]
  let queue: DeadlineQueue<string>

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 })
    fired = []
    queue = new DeadlineQueue(clock, (item) => fired.push(item))
  })
  afterEach(() => {
    queue.clear()
    jest.useRealTimers()
  })

  it('fires each item once at its deadline, earliest first, whatever the order they were added in', () => {
    queue.add('c', 1_003_000)
    queue.add('a', 1_001_000)
    queue.add('b', 1_002_000)
    queue.add('a2', 1_001_000)
    jest.advanceTimersByTime(999)
    expect(fired).toEqual([])
    jest.advanceTimersByTime(1)
    expect(fired).toEqual(['a', 'a2'])
    jest.advanceTimersByTime(2_000)
    expect(fired).toEqual(['a', 'a2', 'b', 'c'])
    jest.advanceTimersByTime(10_000)
    expect(fired).toHaveLength(4)
    expect(jest.getTimerCount()).toBe(0)
  })

  it('does not fire a deleted item, and moves its one timer when the earliest deadline goes', () => {
    queue.add('a', 1_001_000)
    queue.add('b', 1_002_000)
    queue.add('b2', 1_002_000)
    queue.delete('a', 1_001_000)
    queue.delete('b', 1_002_000)
    queue.delete('b', 1_002_000)
    queue.delete('missing', 1_005_000)
    expect(jest.getTimerCount()).toBe(1)
    jest.advanceTimersByTime(1_000)
    expect(fired).toEqual([])
    jest.advanceTimersByTime(1_000)
    expect(fired).toEqual(['b2'])
    queue.add('c', 1_004_000)
    queue.delete('c', 1_004_000)
    expect(jest.getTimerCount()).toBe(0)
  })

  it('fires at once an item whose deadline has passed, and reaches a deadline beyond the longest timer in steps', () => {
    const far = 1_000_000 + 2 ** 31 + 5_000
    queue.add('far', far)
    queue.add('past', 999_000)
    jest.advanceTimersByTime(0)
    expect(fired).toEqual(['past'])
    jest.advanceTimersByTime(2 ** 31 - 1)
    expect(fired).toEqual(['past'])
    jest.advanceTimersByTime(5_000)
    expect(fired).toEqual(['past'])
    jest.advanceTimersByTime(1)
    expect(fired).toEqual(['past', 'far'])
  })

  it('an item added while items fire is kept for its own deadline', () => {
    queue = new DeadlineQueue(clock, (item) => {
      fired.push(item)
      if (item === 'a') queue.add('again', clock.now() + 1_000)
    })
    queue.add('a', 1_001_000)
    jest.advanceTimersByTime(1_000)
    expect(fired).toEqual(['a'])
    jest.advanceTimersByTime(1_000)
    expect(fired).toEqual(['a', 'again'])
  })
})
