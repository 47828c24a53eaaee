import type { Changes } from 'rethinkdb-ts'
import type { Logger } from '../../domain/logger.js'
import type { Data } from '../../domain/service/service.js'
import type { StoreChange } from '../../domain/store/store.js'
import { driverMessage } from './rethinkdb-errors.js'
import { UpdateTags } from './update-tags.js'

/** The part of a rethinkdb-ts feed cursor (a Readable) the feed uses; tests pass a fake. */
export interface FeedCursor {
  on(event: 'data' | 'error' | 'end', listener: (...args: never[]) => void): unknown
  close(): Promise<void>
}

export interface TableChangefeedOptions {
  /** Runs `table.changes({ includeTypes: true, includeStates: true })` and returns its cursor. */
  open(): Promise<FeedCursor>
  idField: string
  onChange(change: StoreChange<Data>): void
  logger: Logger
  tags?: UpdateTags
  initialBackoffMs?: number
  maxBackoffMs?: number
}

/**
 * One table change feed, kept open until `stop()`. The feed is consumed in flowing mode (a paused
 * rethinkdb-ts feed never reports a dropped connection) and re-opened with exponential backoff after
 * `error`/`end` — a server restart or network cut — so events keep coming once the database is back.
 * Changes that happen while the feed is down are not replayed.
 */
export class TableChangefeed {
  readonly tags: UpdateTags
  private running = false
  private live = false
  private attempt = 0
  private cursor?: FeedCursor
  private timer?: ReturnType<typeof setTimeout>
  private waiters: { resolve(): void; reject(error: Error): void }[] = []

  constructor(private readonly options: TableChangefeedOptions) {
    this.tags = options.tags ?? new UpdateTags()
  }

  get isRunning(): boolean {
    return this.running
  }

  start(): void {
    if (this.running) return
    this.running = true
    void this.connect()
  }

  async stop(): Promise<void> {
    this.running = false
    this.live = false
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    const waiters = this.waiters.splice(0)
    for (const waiter of waiters) waiter.reject(new Error('The change feed was stopped'))
    const cursor = this.cursor
    this.cursor = undefined
    await cursor?.close().catch(() => undefined)
  }

  /** Resolves once the server confirmed the feed: writes made after this are reported. */
  whenLive(): Promise<void> {
    if (this.live) return Promise.resolve()
    if (!this.running) return Promise.reject(new Error('The change feed is not running'))
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }))
  }

  private async connect(): Promise<void> {
    this.timer = undefined
    let cursor: FeedCursor
    try {
      cursor = await this.options.open()
    } catch (error) {
      if (this.running) this.retry('could not open', error)
      return
    }
    if (!this.running) {
      await cursor.close().catch(() => undefined)
      return
    }
    this.cursor = cursor
    let finished = false
    const finish = (reason: string, error?: unknown): void => {
      if (finished) return
      finished = true
      if (this.cursor === cursor) this.cursor = undefined
      this.live = false
      void cursor.close().catch(() => undefined)
      if (this.running) this.retry(reason, error)
    }
    cursor.on('error', ((error: unknown) => finish('failed', error)) as (...args: never[]) => void)
    cursor.on('end', () => finish('ended'))
    // Attaching 'data' last switches the stream to flowing mode once every listener is in place.
    cursor.on('data', ((row: Changes<Data>) => this.receive(row)) as (...args: never[]) => void)
  }

  private retry(reason: string, error: unknown): void {
    const delay = Math.min((this.options.initialBackoffMs ?? 100) * 2 ** this.attempt, this.options.maxBackoffMs ?? 5_000)
    this.attempt++
    this.options.logger.warn(`RethinkDB change feed ${reason}; re-opening`, {
      retryInMs: delay,
      ...(error === undefined ? {} : { error: driverMessage(error) })
    })
    this.timer = setTimeout(() => void this.connect(), delay)
    // A reconnect timer alone must not keep a process (or a test run) alive.
    this.timer.unref?.()
  }

  private markLive(): void {
    if (this.live) return
    this.live = true
    this.attempt = 0
    for (const waiter of this.waiters.splice(0)) waiter.resolve()
  }

  private receive(row: Changes<Data>): void {
    if (typeof (row as { error?: unknown }).error === 'string') {
      // The server dropped changes (a client too slow for its 100,000-change buffer): say so.
      this.options.logger.warn('RethinkDB change feed skipped changes', { error: (row as { error: string }).error })
      return
    }
    if (row.state !== undefined) {
      if (row.state === 'ready') this.markLive()
      return
    }
    this.markLive()
    const type = row.type ?? (row.old_val == null ? 'add' : row.new_val == null ? 'remove' : 'change')
    switch (type) {
      case 'add':
        if (row.new_val) this.emit({ event: 'created', record: row.new_val })
        break
      case 'remove':
        if (row.old_val) this.emit({ event: 'removed', record: row.old_val })
        break
      case 'change':
        if (row.new_val) {
          const updated = this.tags.consume(row.new_val[this.options.idField])
          this.emit({ event: updated ? 'updated' : 'patched', record: row.new_val })
        }
        break
      default:
        // 'initial', 'uninitial' and 'state' rows only appear with options this feed does not use.
        break
    }
  }

  private emit(change: StoreChange<Data>): void {
    try {
      this.options.onChange(change)
    } catch (error) {
      // A failing listener must not end the feed for everyone else.
      this.options.logger.error('RethinkDB change listener failed', { event: change.event, error: driverMessage(error) })
    }
  }
}
