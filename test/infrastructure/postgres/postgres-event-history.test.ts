import { describe, expect, it } from '@jest/globals'
import type { RecordedEvent } from '../../../src/domain/realtime/event-history.js'
import { PostgresEventHistory, type LogPosition } from '../../../src/infrastructure/postgres/postgres-event-history.js'
import type { LogPlace } from '../../../src/infrastructure/postgres/postgres-event-log.js'
import { FakeClock } from '../../support/fake-clock.js'

/*
 * The PostgreSQL log's order in the shared history (OrderedLogHistory, tested in depth with the
 * RethinkDB order): places are a transaction id and a row number, offsets `<epoch>.<tx>.<id>[.<rank>]`.
 */
const place = (tx: number, id: number): LogPlace => ({ tx: BigInt(tx), id: BigInt(id) })

class FakeLog implements LogPosition {
  epoch: string | undefined = 'e1'
  startedAfter: LogPlace | undefined = place(5, 1)
  position: LogPlace | undefined = place(5, 1)
  delivering: LogPlace | undefined

  deliver(at: LogPlace, publish: () => void): void {
    this.position = at
    this.delivering = at
    try {
      publish()
    } finally {
      this.delivering = undefined
    }
  }

  /** How long each caller of `whenAt` would wait. */
  readonly waits: number[] = []

  whenAt(at: LogPlace, timeoutMs: number): Promise<boolean> {
    this.waits.push(timeoutMs)
    const reached =
      this.position !== undefined &&
      (this.position.tx > at.tx || (this.position.tx === at.tx && this.position.id >= at.id))
    return Promise.resolve(reached)
  }
}

const ids = (events: RecordedEvent[] | 'unknown') =>
  events === 'unknown' ? events : events.map((event) => (event.data as { id: number }).id)

function setup() {
  const log = new FakeLog()
  const history = new PostgresEventHistory({ log, clock: new FakeClock(), retentionMs: 60_000 })
  const logged = (at: LogPlace, n: number) => {
    let offset = ''
    log.deliver(at, () => {
      offset = history.append({ path: 'messages', event: 'created', data: { id: n } })
    })
    return offset
  }
  return { log, history, logged }
}

describe('PostgresEventHistory', () => {
  it('names each event by its transaction and row in base 36, and answers what followed an offset in that order', async () => {
    const { history, logged } = setup()
    const first = logged(place(40, 7), 1)
    logged(place(40, 8), 2)
    logged(place(41, 3), 3)
    expect(first).toBe('e1.14.7')
    expect(ids(await history.since(first))).toEqual([2, 3])
    expect(ids(await history.since('e1.14.8'))).toEqual([3])
    expect(history.head()).toBe('e1.15.3')
  })

  it('ranks an event published outside the log after the log event it follows', async () => {
    const { history, logged } = setup()
    const logOffset = logged(place(40, 7), 1)
    const outside = history.append({ path: 'status', event: 'changed', data: { id: 2 } })
    expect(outside).toBe('e1.14.7.1')
    expect(ids(await history.since(logOffset))).toEqual([2])
  })

  it('does not know offsets of another epoch, from before it followed the log, or not written as it writes them', async () => {
    const { history, logged } = setup()
    logged(place(40, 7), 1)
    for (const offset of ['e2.14.7', 'e1.4.9', 'e1.14', 'e1.14.07', 'e1.14.7.0', 'e1.14.7.1.1', 'e1.x-.7'])
      expect([offset, await history.since(offset)]).toEqual([offset, 'unknown'])
  })
  it("waits 2 s at most for an offset ahead in a live query's resume (sinceFor), and 5 s in since", async () => {
    const { log, history } = setup()
    expect(await history.since('e1.14.7')).toBe('unknown')
    // Not past the history: this instance is behind the one that gave the offset out. The client tries again.
    await expect(history.sinceFor('e1.14.7', ['messages'], () => true)).rejects.toMatchObject({
      code: 503,
      message: expect.stringContaining('not yet reached the offset')
    })
    expect(log.waits).toEqual([5000, 2000])
  })
})
