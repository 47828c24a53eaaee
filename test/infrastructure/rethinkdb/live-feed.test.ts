import { EventEmitter } from 'node:events'
import type { Logger } from '../../../src/domain/logger.js'
import type { FeedState } from '../../../src/domain/metrics.js'
import { LiveFeed, type FeedRow } from '../../../src/infrastructure/rethinkdb/live-feed.js'

/** Stands in for a rethinkdb-ts feed cursor: rows, errors and ends are pushed by the test. */
class FakeCursor extends EventEmitter {
  closed = false
  private onFlowing!: () => void
  /** Resolves when the feed attached its 'data' listener (flowing mode). */
  readonly flowing = new Promise<void>((resolve) => (this.onFlowing = resolve))

  override on(event: string | symbol, listener: (...args: never[]) => void): this {
    super.on(event, listener as (...args: unknown[]) => void)
    if (event === 'data') this.onFlowing()
    return this
  }

  async close(): Promise<void> {
    this.closed = true
  }

  row(row: Record<string, unknown>): void {
    this.emit('data', row)
  }
}

interface LogEntry {
  level: keyof Logger
  message: string
  details?: Record<string, unknown>
}

function harness(options: { failOpens?: number } = {}) {
  const changes: FeedRow[] = []
  const states: FeedState[] = []
  let lost = 0
  const logs: LogEntry[] = []
  const opened: FakeCursor[] = []
  const waiting: ((cursor: FakeCursor) => void)[] = []
  let failures = options.failOpens ?? 0
  let opens = 0
  const logger: Logger = {
    debug: (message, details) => logs.push({ level: 'debug', message, details }),
    info: (message, details) => logs.push({ level: 'info', message, details }),
    warn: (message, details) => logs.push({ level: 'warn', message, details }),
    error: (message, details) => logs.push({ level: 'error', message, details })
  }
  const feed = new LiveFeed({
    name: 'messages table',
    logger,
    initialBackoffMs: 1,
    maxBackoffMs: 4,
    onRow: (row) => changes.push(row),
    onLost: () => lost++,
    onState: (state) => states.push(state),
    open: async () => {
      opens++
      if (failures > 0) {
        failures--
        throw new Error('None of the pools have an opened connection and failed to open a new one.')
      }
      const cursor = new FakeCursor()
      opened.push(cursor)
      for (const resolve of waiting.splice(0)) resolve(cursor)
      return cursor
    }
  })
  /** The next cursor the feed opens, once it is consumed in flowing mode. */
  const nextCursor = async (): Promise<FakeCursor> => {
    const cursor = await new Promise<FakeCursor>((resolve) => waiting.push(resolve))
    await cursor.flowing
    return cursor
  }
  return { feed, changes, states, logs, opened, nextCursor, opens: () => opens, lost: () => lost }
}

describe('LiveFeed', () => {
  it('passes every row but state rows on, in order', async () => {
    const { feed, changes, nextCursor } = harness()
    const next = nextCursor()
    feed.start()
    const cursor = await next
    cursor.row({ state: 'initializing' })
    cursor.row({ type: 'initial', new_val: { id: 0 } })
    cursor.row({ state: 'ready' })
    cursor.row({ type: 'add', old_val: null, new_val: { id: 1, n: 1 } })
    cursor.row({ type: 'remove', old_val: { id: 1, n: 1 }, new_val: null })
    expect(changes).toEqual([
      { type: 'initial', new_val: { id: 0 } },
      { type: 'add', old_val: null, new_val: { id: 1, n: 1 } },
      { type: 'remove', old_val: { id: 1, n: 1 }, new_val: null }
    ])
    await feed.stop()
  })

  it('is not live before the ready state, however many rows came first', async () => {
    const { feed, nextCursor } = harness()
    const next = nextCursor()
    feed.start()
    const cursor = await next
    cursor.row({ type: 'initial', new_val: { id: 0 } })
    expect(feed.isLive).toBe(false)
    cursor.row({ state: 'ready' })
    expect(feed.isLive).toBe(true)
    await feed.stop()
  })

  it('is live once the server sends the ready state, and publishes no state rows', async () => {
    const { feed, changes, nextCursor } = harness()
    const next = nextCursor()
    feed.start()
    const cursor = await next
    const live = feed.whenLive()
    cursor.row({ state: 'initializing' })
    cursor.row({ state: 'ready' })
    await expect(live).resolves.toBeUndefined()
    await expect(feed.whenLive()).resolves.toBeUndefined()
    expect(changes).toEqual([])
    await feed.stop()
  })

  it('re-opens the feed after an error and after an end, and keeps publishing', async () => {
    const { feed, changes, logs, nextCursor, lost } = harness()
    let next = nextCursor()
    feed.start()
    const first = await next
    next = nextCursor()
    first.emit('error', new Error('The connection was closed before the query could be completed'))
    first.emit('end')
    const second = await next
    expect(first.closed).toBe(true)
    next = nextCursor()
    second.emit('end')
    const third = await next
    third.row({ type: 'add', old_val: null, new_val: { id: 'after' } })
    expect(changes).toEqual([{ type: 'add', old_val: null, new_val: { id: 'after' } }])
    expect(lost()).toBe(2)
    const warnings = logs.filter((entry) => entry.level === 'warn')
    expect(warnings.map((entry) => entry.message)).toEqual([
      'RethinkDB messages table change feed failed; re-opening',
      'RethinkDB messages table change feed ended; re-opening'
    ])
    expect(warnings[0]!.details).toMatchObject({
      error: 'The connection was closed before the query could be completed'
    })
    await feed.stop()
  })

  it('reports its state for metrics: connecting until ready, connecting again when lost, stopped', async () => {
    const { feed, states, nextCursor } = harness()
    let next = nextCursor()
    feed.start()
    const first = await next
    expect(states).toEqual(['connecting'])
    first.row({ state: 'ready' })
    expect(states).toEqual(['connecting', 'live'])
    next = nextCursor()
    first.emit('end')
    expect(states).toEqual(['connecting', 'live', 'connecting'])
    const second = await next
    second.row({ state: 'ready' })
    await feed.stop()
    expect(states).toEqual(['connecting', 'live', 'connecting', 'live', 'stopped'])
  })

  it('keeps retrying, with growing delays up to its cap, while the feed cannot be opened', async () => {
    const { feed, logs, nextCursor, opens } = harness({ failOpens: 4 })
    const next = nextCursor()
    feed.start()
    await next
    expect(opens()).toBe(5)
    const delays = logs.filter((entry) => entry.level === 'warn').map((entry) => entry.details?.retryInMs)
    expect(delays).toEqual([1, 2, 4, 4])
    await feed.stop()
  })

  it('stops for good: closes the cursor, re-opens nothing and releases waiters', async () => {
    const { feed, opened, nextCursor } = harness()
    const next = nextCursor()
    feed.start()
    const cursor = await next
    const live = feed.whenLive()
    await feed.stop()
    expect(cursor.closed).toBe(true)
    await expect(live).rejects.toThrow('The messages table change feed was stopped')
    cursor.emit('end')
    await new Promise((resolve) => setImmediate(resolve))
    expect(opened).toHaveLength(1)
    await expect(feed.whenLive()).rejects.toThrow('not running')
  })

  it('logs the error rows of a server that dropped changes, and publishes nothing for them', async () => {
    const { feed, changes, logs, nextCursor } = harness()
    const next = nextCursor()
    feed.start()
    const cursor = await next
    cursor.row({ error: 'Changefeed cache over array size limit, skipped 12 elements.' })
    expect(changes).toEqual([])
    expect(logs).toContainEqual({
      level: 'warn',
      message: 'RethinkDB messages table change feed skipped changes',
      details: { error: 'Changefeed cache over array size limit, skipped 12 elements.' }
    })
    await feed.stop()
  })

  it('keeps publishing when a listener throws, and logs the failure', async () => {
    const logs: LogEntry[] = []
    const seen: string[] = []
    const cursor = new FakeCursor()
    const feed = new LiveFeed<{ id: string }>({
      name: 'messages table',
      logger: {
        debug() {},
        info() {},
        warn() {},
        error: (message, details) => logs.push({ level: 'error', message, details })
      },
      open: async () => cursor,
      onRow: (row) => {
        seen.push(row.new_val!.id)
        if (row.new_val!.id === 'bad') throw new Error('listener bug')
      }
    })
    feed.start()
    await cursor.flowing
    cursor.row({ type: 'add', old_val: null, new_val: { id: 'bad' } })
    cursor.row({ type: 'add', old_val: null, new_val: { id: 'good' } })
    expect(seen).toEqual(['bad', 'good'])
    expect(logs).toEqual([
      { level: 'error', message: 'RethinkDB messages table change listener failed', details: { error: 'listener bug' } }
    ])
    await feed.stop()
  })
})
