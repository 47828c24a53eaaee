import { describe, expect, it } from '@jest/globals'
import { PositionWaiters } from '../../../../src/infrastructure/store-commons/event-log/position-waiters.js'
import { TableSubscribers } from '../../../../src/infrastructure/store-commons/event-log/table-subscribers.js'

describe('PositionWaiters', () => {
  const byNumber = () => new PositionWaiters<number>((a, b) => a - b)

  it('answers true at once when the position is already at or past the place', async () => {
    const waiters = byNumber()
    await expect(waiters.whenAt(5, 5, 1_000)).resolves.toBe(true)
    await expect(waiters.whenAt(7, 5, 1_000)).resolves.toBe(true)
  })

  it('answers true when the log reaches the place or a later one, and only then', async () => {
    const waiters = byNumber()
    const answers: [number, boolean][] = []
    for (const place of [3, 5, 9]) void waiters.whenAt(undefined, place, 10_000).then((r) => answers.push([place, r]))
    waiters.reached(2)
    await Promise.resolve()
    expect(answers).toEqual([])
    waiters.reached(6)
    await new Promise((resolve) => setImmediate(resolve))
    expect(answers).toEqual([
      [3, true],
      [5, true]
    ])
    waiters.cancel()
    await new Promise((resolve) => setImmediate(resolve))
    expect(answers).toContainEqual([9, false])
  })

  it('answers false after the timeout', async () => {
    await expect(byNumber().whenAt(1, 2, 10)).resolves.toBe(false)
  })
})

describe('TableSubscribers.hand', () => {
  it('hands an event to every listener of its table, reporting one that throws without skipping the others', () => {
    const subscribers = new TableSubscribers<string>(
      () => undefined,
      () => undefined
    )
    const got: string[] = []
    const failed: unknown[] = []
    subscribers.add('messages', () => {
      throw new Error('broken listener')
    })
    subscribers.add('messages', (event) => got.push(`messages:${event}`))
    subscribers.add('users', (event) => got.push(`users:${event}`))
    subscribers.hand('messages', 'created', (error) => failed.push(error))
    subscribers.hand('rooms', 'created', (error) => failed.push(error))
    expect(got).toEqual(['messages:created'])
    expect(failed).toEqual([new Error('broken listener')])
  })
})
