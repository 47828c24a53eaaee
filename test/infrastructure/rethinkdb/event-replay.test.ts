import { describe, expect, it } from '@jest/globals'
import { EventReplay } from '../../../src/infrastructure/rethinkdb/event-replay.js'

const event = (id: string, ts: number) => ({ id, ts })
const ids = (events: { id: string }[]) => events.map((entry) => entry.id)

describe('EventReplay', () => {
  it('starts at the given time and resumes a look-back before the newest event handed out', () => {
    const replay = new EventReplay(10)
    expect(replay.resumeFrom()).toBeUndefined()
    replay.startAt(1_000)
    expect(replay.resumeFrom()).toBe(990)
    replay.ready()
    replay.row(event('a', 1_005))
    replay.row(event('b', 1_003))
    expect(replay.resumeFrom()).toBe(995)
  })

  it('holds the rows of a cursor until its ready, then hands them out sorted by time', () => {
    const replay = new EventReplay(10)
    replay.startAt(0)
    expect(replay.row(event('c', 3))).toEqual([])
    expect(replay.row(event('a', 1))).toEqual([])
    expect(replay.row(event('b', 2))).toEqual([])
    expect(ids(replay.ready())).toEqual(['a', 'b', 'c'])
    expect(ids(replay.row(event('d', 4)))).toEqual(['d'])
  })

  it('hands out every id once across re-opened cursors, and the missed ones in order', () => {
    const replay = new EventReplay(10)
    replay.startAt(0)
    replay.ready()
    expect(ids([...replay.row(event('a', 1)), ...replay.row(event('b', 5))])).toEqual(['a', 'b'])
    replay.lost()
    // The next cursor starts before b and brings a, b and what was written while it was down.
    expect(replay.resumeFrom()).toBe(-5)
    for (const entry of [event('d', 9), event('b', 5), event('a', 1), event('c', 7)]) expect(replay.row(entry)).toEqual([])
    expect(ids(replay.ready())).toEqual(['c', 'd'])
    expect(replay.row(event('c', 7))).toEqual([])
    expect(ids(replay.row(event('e', 11)))).toEqual(['e'])
  })

  it('drops the held rows of a cursor that ends before its ready (the next one replays them)', () => {
    const replay = new EventReplay(10)
    replay.startAt(0)
    replay.row(event('a', 1))
    replay.lost()
    replay.row(event('a', 1))
    replay.row(event('b', 2))
    expect(ids(replay.ready())).toEqual(['a', 'b'])
  })

  it('keeps the ids a replay can still bring, and starts anew after reset', () => {
    const replay = new EventReplay(10)
    replay.startAt(0)
    replay.ready()
    for (let index = 0; index < 20_001; index++) replay.row(event(`e${index}`, index))
    // Still known: within twice the look-back of the newest; a replay of them hands out nothing.
    expect(replay.row(event('e19999', 19_999))).toEqual([])
    replay.reset()
    expect(replay.resumeFrom()).toBeUndefined()
    replay.startAt(0)
    expect(replay.row(event('e19999', 19_999))).toEqual([])
    expect(ids(replay.ready())).toEqual(['e19999'])
  })
})
