import { describe, expect, it } from '@jest/globals'
import type { RecordedEvent } from '../../../src/domain/realtime/event-history.js'
import {
  gapEvents,
  RethinkDbEventHistory,
  type LogPosition
} from '../../../src/infrastructure/rethinkdb/rethinkdb-event-history.js'
import { FakeClock } from '../../support/fake-clock.js'

/** The log as the history sees it: numbers handed out one by one, and who is waiting for one. */
class FakeLog implements LogPosition {
  epoch: string | undefined = 'e1'
  startedAfter: number | undefined = 10
  position: number | undefined = 10
  delivering: number | undefined
  private readonly waiting: { seq: number; resolve(reached: boolean): void }[] = []

  /** Hands out number `seq` (in order): `publish` runs as the log's subscribers would. */
  deliver(seq: number, publish: () => void = () => undefined): void {
    this.position = seq
    this.delivering = seq
    try {
      publish()
    } finally {
      this.delivering = undefined
    }
    for (const waiter of this.waiting.splice(0)) {
      if (waiter.seq <= seq) waiter.resolve(true)
      else this.waiting.push(waiter)
    }
  }

  whenAt(seq: number): Promise<boolean> {
    if ((this.position ?? -1) >= seq) return Promise.resolve(true)
    return new Promise((resolve) => this.waiting.push({ seq, resolve }))
  }

  /** Gives up on every waiter (their time ran out). */
  timeOut(): void {
    for (const waiter of this.waiting.splice(0)) waiter.resolve(false)
  }
}

const created = (n: number) => ({ path: 'messages', event: 'created', data: { id: n } })
const ids = (events: RecordedEvent[] | 'unknown') =>
  events === 'unknown' ? events : events.map((event) => (event.data as { id: number }).id)

function setup(options: { retentionMs?: number; maxEvents?: number } = {}) {
  const log = new FakeLog()
  const clock = new FakeClock()
  const history = new RethinkDbEventHistory({
    log,
    clock,
    retentionMs: options.retentionMs ?? 60_000,
    ...(options.maxEvents ? { maxEvents: options.maxEvents } : {})
  })
  /** Delivers log number `seq` and publishes event `n` with it; answers its offset. */
  const logged = (seq: number, n = seq) => {
    let offset = ''
    log.deliver(seq, () => {
      offset = history.append(created(n))
    })
    return offset
  }
  return { log, clock, history, logged }
}

describe('RethinkDbEventHistory', () => {
  it('gives each logged event its number in the log as offset: the same on every instance', async () => {
    const a = setup()
    const b = setup()
    expect(a.history.head()).toBe('e1.a')
    const offsets = [11, 12, 13].map((seq) => a.logged(seq))
    expect(offsets).toEqual(['e1.b', 'e1.c', 'e1.d'])
    expect([11, 12, 13].map((seq) => b.logged(seq))).toEqual(offsets)
    expect(a.history.head()).toBe('e1.d')
    // A client of instance a resumes on b.
    expect(ids(await b.history.since(offsets[0]!))).toEqual([12, 13])
    expect(ids(await b.history.since('e1.a'))).toEqual([11, 12, 13])
    expect(await b.history.since(offsets[2]!)).toEqual([])
    const [event] = (await b.history.since(offsets[1]!)) as RecordedEvent[]
    expect(event).toEqual({ ...created(13), offset: 'e1.d' })
  })

  it('the head moves with numbers nothing was published for (no publisher), and later events follow it', async () => {
    const { log, history, logged } = setup()
    logged(11)
    log.deliver(12)
    expect(history.head()).toBe('e1.c')
    const offset = logged(13)
    expect(ids(await history.since('e1.c'))).toEqual([13])
    expect(offset).toBe('e1.d')
  })

  it('ranks events published outside the log after the log event they follow, recoverable here', async () => {
    const { history, logged } = setup()
    const first = logged(11)
    const local = history.append(created(100))
    const head = history.head()
    expect(local).toBe('e1.b.1')
    expect(head).toBe(local)
    expect(ids(await history.since(first))).toEqual([100])
    logged(12)
    expect(ids(await history.since(local))).toEqual([12])
    // Before any log event is handed out at a number, an outside event still ranks after the head.
    const { history: quiet } = setup()
    const before = quiet.head()
    expect(quiet.append(created(1))).toBe('e1.a.1')
    expect(ids(await quiet.since(before))).toEqual([1])
  })

  it('two events published for one log event (two services on one table) get two offsets', async () => {
    const { log, history } = setup()
    const offsets: string[] = []
    log.deliver(11, () => {
      offsets.push(history.append(created(1)), history.append({ ...created(1), path: 'archive' }))
    })
    expect(offsets).toEqual(['e1.b', 'e1.b.1'])
    expect(((await history.since('e1.b')) as RecordedEvent[]).map((event) => event.path)).toEqual(['archive'])
  })

  it('does not know offsets of another epoch, from before this process followed the log, or malformed ones', async () => {
    const { history, logged } = setup()
    logged(11)
    for (const offset of ['', 'e1', 'e2.b', 'e1.9', 'e1.-1', 'e1.0b', 'e1.b.0', 'e1.b.1.1', 'e1.zzzzzzzzzzzz']) {
      expect(await history.since(offset)).toBe('unknown')
    }
    expect(ids(await history.since('e1.a'))).toEqual([11])
  })

  it('does not know anything before the log is set up and followed', async () => {
    const { log, history } = setup()
    log.epoch = undefined
    log.startedAfter = undefined
    expect(await history.since(history.head())).toBe('unknown')
  })

  it('waits for an offset a faster instance gave out, and answers unknown when this one does not get there', async () => {
    const { log, history, logged } = setup()
    logged(11)
    const ahead = history.since('e1.c')
    logged(12)
    logged(13)
    expect(ids(await ahead)).toEqual([13])
    const tooFar = history.since('e1.z')
    log.timeOut()
    expect(await tooFar).toBe('unknown')
  })

  it('forgets events older than the retention, and offsets before a forgotten event are unknown', async () => {
    const { clock, history, logged } = setup({ retentionMs: 1_000 })
    const first = logged(11)
    clock.advance(600)
    const second = logged(12)
    logged(13)
    clock.advance(500)
    expect(await history.since('e1.a')).toBe('unknown')
    expect(ids(await history.since(first))).toEqual([12, 13])
    expect(ids(await history.since(second))).toEqual([13])
  })

  it('keeps at most maxEvents', async () => {
    const { history, logged } = setup({ maxEvents: 2 })
    const first = logged(11)
    logged(12)
    logged(13)
    expect(await history.since('e1.a')).toBe('unknown')
    expect(ids(await history.since(first))).toEqual([12, 13])
  })

  it("names a row's several events by its last number and ranks 1, 2, …, and a gap read finds the row's events after a rank", () => {
    const { log, history } = setup()
    // One write of three records: the row numbered 11 holds events 11, 12 and 13, handed out at position 13.
    log.position = 13
    const offsets = [11, 12, 13].map((seq, index) => {
      log.delivering = seq
      return history.append(created(20 + index))
    })
    log.delivering = undefined
    expect(offsets).toEqual(['e1.d.1', 'e1.d.2', 'e1.d.3'])
    const event = (n: number, table = 'messages') => ({ table, event: 'created', record: { id: n } })
    const rows = [
      { id: 11, ts: 0, events: [event(20), event(21), event(22)] },
      { id: 14, ts: 0, events: [event(23)] },
      { id: 15, ts: 0, events: [event(24, 'users')] },
      { id: 16, ts: 0, events: [event(25)] }
    ]
    const read = (rank: number, to = 16) =>
      gapEvents(rows, { from: 13, rank, to, tables: ['messages'] }).map((e) => (e.data as { id: number }).id)
    // After the row's first event (rank 1): its second and third, then the later rows of the table, up to `to`.
    expect(read(1)).toEqual([21, 22, 23, 25])
    expect(read(2)).toEqual([22, 23, 25])
    expect(read(3)).toEqual([23, 25])
    // An event published outside the log after the row ranks after its events: nothing of the row follows it.
    expect(read(4)).toEqual([23, 25])
    expect(read(1, 14)).toEqual([21, 22, 23])
    // A row of one event is named by its number with rank 0.
    expect(gapEvents(rows, { from: 14, rank: 0, to: 16, tables: ['messages'] }).length).toBe(1)
    // A superseded event (a later write of its record came first) was never published: no rank, not in a gap.
    const superseded = [{ ...rows[0]!, events: [event(20), { ...event(21), superseded: true as const }, event(22)] }]
    const ids = (from: number, rank: number) =>
      gapEvents(superseded, { from, rank, to: 16, tables: ['messages'] }).map((e) => (e.data as { id: number }).id)
    expect(ids(10, 0)).toEqual([20, 22])
    expect(ids(13, 1)).toEqual([22])
    expect(ids(13, 2)).toEqual([])
  })
})
