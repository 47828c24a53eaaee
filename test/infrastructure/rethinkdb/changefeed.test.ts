import { EventEmitter } from 'node:events'
import type { Logger } from '../../../src/domain/logger.js'
import type { Data } from '../../../src/domain/service/service.js'
import type { StoreChange } from '../../../src/domain/store/store.js'
import { TableChangefeed } from '../../../src/infrastructure/rethinkdb/changefeed.js'

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

interface LogEntry { level: keyof Logger; message: string; details?: Record<string, unknown> }

function harness(options: { failOpens?: number } = {}) {
  const changes: StoreChange<Data>[] = []
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
  const feed = new TableChangefeed({
    idField: 'id',
    logger,
    initialBackoffMs: 1,
    maxBackoffMs: 4,
    onChange: (change) => changes.push(change),
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
  return { feed, changes, logs, opened, nextCursor, opens: () => opens }
}

describe('TableChangefeed', () => {
  it('maps add, remove and change to created, removed and patched', async () => {
    const { feed, changes, nextCursor } = harness()
    const next = nextCursor()
    feed.start()
    const cursor = await next
    cursor.row({ type: 'add', old_val: null, new_val: { id: 1, n: 1 } })
    cursor.row({ type: 'change', old_val: { id: 1, n: 1 }, new_val: { id: 1, n: 2 } })
    cursor.row({ type: 'remove', old_val: { id: 1, n: 2 }, new_val: null })
    expect(changes).toEqual([
      { event: 'created', record: { id: 1, n: 1 } },
      { event: 'patched', record: { id: 1, n: 2 } },
      { event: 'removed', record: { id: 1, n: 2 } }
    ])
    await feed.stop()
  })

  it('reports a change this process tagged as updated, once', async () => {
    const { feed, changes, nextCursor } = harness()
    const next = nextCursor()
    feed.start()
    const cursor = await next
    feed.tags.expect(0)
    cursor.row({ type: 'change', old_val: { id: 0, n: 1 }, new_val: { id: 0, n: 2 } })
    cursor.row({ type: 'change', old_val: { id: 0, n: 2 }, new_val: { id: 0, n: 3 } })
    expect(changes.map((change) => change.event)).toEqual(['updated', 'patched'])
    await feed.stop()
  })

  it('derives the change type from old and new values when the row has none', async () => {
    const { feed, changes, nextCursor } = harness()
    const next = nextCursor()
    feed.start()
    const cursor = await next
    cursor.row({ old_val: null, new_val: { id: 'a' } })
    cursor.row({ old_val: { id: 'a' }, new_val: { id: 'a', x: 1 } })
    cursor.row({ old_val: { id: 'a', x: 1 }, new_val: null })
    expect(changes.map((change) => change.event)).toEqual(['created', 'patched', 'removed'])
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
    const { feed, changes, logs, nextCursor } = harness()
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
    expect(changes).toEqual([{ event: 'created', record: { id: 'after' } }])
    const warnings = logs.filter((entry) => entry.level === 'warn')
    expect(warnings.map((entry) => entry.message)).toEqual(['RethinkDB change feed failed; re-opening', 'RethinkDB change feed ended; re-opening'])
    expect(warnings[0]!.details).toMatchObject({ error: 'The connection was closed before the query could be completed' })
    await feed.stop()
  })

  it('keeps retrying, with growing delays, while the feed cannot be opened', async () => {
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
    await expect(live).rejects.toThrow('The change feed was stopped')
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
    expect(logs).toContainEqual({ level: 'warn', message: 'RethinkDB change feed skipped changes', details: { error: 'Changefeed cache over array size limit, skipped 12 elements.' } })
    await feed.stop()
  })

  it('keeps publishing when a listener throws, and logs the failure', async () => {
    const logs: LogEntry[] = []
    const seen: string[] = []
    const cursor = new FakeCursor()
    const feed = new TableChangefeed({
      idField: 'id',
      logger: { debug() {}, info() {}, warn() {}, error: (message, details) => logs.push({ level: 'error', message, details }) },
      open: async () => cursor,
      onChange: (change) => {
        seen.push(String(change.record.id))
        if (change.record.id === 'bad') throw new Error('listener bug')
      }
    })
    feed.start()
    await cursor.flowing
    cursor.row({ type: 'add', old_val: null, new_val: { id: 'bad' } })
    cursor.row({ type: 'add', old_val: null, new_val: { id: 'good' } })
    expect(seen).toEqual(['bad', 'good'])
    expect(logs).toEqual([{ level: 'error', message: 'RethinkDB change listener failed', details: { event: 'created', error: 'listener bug' } }])
    await feed.stop()
  })
})
