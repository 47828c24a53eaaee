import { describe, expect, it } from '@jest/globals'
import type { RecordedEvent } from '../../../src/domain/realtime/event-history.js'
import { InMemoryEventHistory } from '../../../src/infrastructure/store-commons/history/in-memory-event-history.js'
import { FakeClock } from '../../support/fake-clock.js'

const created = (n: number) => ({ path: 'messages', event: 'created', data: { id: n } })
const ids = (events: RecordedEvent[] | 'unknown') =>
  events === 'unknown' ? events : events.map((event) => (event.data as { id: number }).id)

describe('InMemoryEventHistory', () => {
  it('answers the events after an offset, in order, each with its own offset', async () => {
    const history = new InMemoryEventHistory(new FakeClock(), 60_000)
    const start = history.head()
    const offsets = [1, 2, 3].map((n) => history.append(created(n)))
    expect(new Set(offsets).size).toBe(3)
    expect(ids(await history.since(start))).toEqual([1, 2, 3])
    expect(ids(await history.since(offsets[0]!))).toEqual([2, 3])
    expect(await history.since(offsets[2]!)).toEqual([])
    expect(history.head()).toBe(offsets[2])
    const [second] = (await history.since(offsets[0]!)) as RecordedEvent[]
    expect(second).toEqual({ ...created(2), offset: offsets[1] })
  })

  it('keeps the context a publisher needs', async () => {
    const history = new InMemoryEventHistory(new FakeClock(), 60_000)
    const start = history.head()
    const context = {
      path: 'messages',
      method: 'create',
      event: 'created',
      result: { id: 1 },
      params: { provider: 'rest', user: { id: 7 } }
    }
    history.append({ ...created(1), context })
    expect(await history.since(start)).toEqual([{ ...created(1), context, offset: expect.any(String) }])
  })

  it('does not know offsets of another history (another process, or this one before a restart) or malformed ones', async () => {
    const other = new InMemoryEventHistory(new FakeClock(), 60_000)
    const history = new InMemoryEventHistory(new FakeClock(), 60_000)
    const foreign = other.append(created(1))
    history.append(created(1))
    expect(await history.since(foreign)).toBe('unknown')
    expect(await history.since(other.head())).toBe('unknown')
    const head = history.head()
    const epoch = head.slice(0, head.lastIndexOf('.'))
    for (const offset of ['', 'nonsense', `${epoch}.`, `${epoch}.-1`, `${epoch}.01`, `${epoch}.zz`, `${epoch}.1.2`]) {
      expect(await history.since(offset)).toBe('unknown')
    }
  })

  it('forgets events older than the retention; an offset before them becomes unknown', async () => {
    const clock = new FakeClock()
    const history = new InMemoryEventHistory(clock, 10_000)
    const start = history.head()
    const first = history.append(created(1))
    clock.advance(6000)
    const second = history.append(created(2))
    clock.advance(6000)
    // The first event is 12 s old: gone. An offset at it still resumes (nothing after it was lost).
    expect(await history.since(start)).toBe('unknown')
    expect(ids(await history.since(first))).toEqual([2])
    clock.advance(6000)
    expect(await history.since(first)).toBe('unknown')
    expect(await history.since(second)).toEqual([])
  })

  it('keeps at most maxEvents', async () => {
    const history = new InMemoryEventHistory(new FakeClock(), 60_000, 3)
    const offsets = [1, 2, 3, 4, 5].map((n) => history.append(created(n)))
    expect(await history.since(offsets[0]!)).toBe('unknown')
    expect(ids(await history.since(offsets[1]!))).toEqual([3, 4, 5])
  })

  it('stays consistent while dropping the front of a long history in chunks', async () => {
    const history = new InMemoryEventHistory(new FakeClock(), 60_000, 100)
    const offsets = Array.from({ length: 5000 }, (_, n) => history.append(created(n)))
    expect(ids(await history.since(offsets[4949]!))).toEqual(Array.from({ length: 50 }, (_, n) => 4950 + n))
    expect(ids(await history.since(offsets[4899]!))).toHaveLength(100)
    expect(await history.since(offsets[4898]!)).toBe('unknown')
  })

  it('answers unknown for an offset it has not given out yet', async () => {
    const history = new InMemoryEventHistory(new FakeClock(), 60_000)
    const head = history.head()
    const ahead = `${head.slice(0, head.lastIndexOf('.'))}.5`
    expect(await history.since(ahead)).toBe('unknown')
  })
})
