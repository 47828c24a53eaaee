import type { Logger } from '../../domain/logger.js'
import type { FeedState } from '../../domain/metrics.js'
import { driverMessage } from './rethinkdb-errors.js'

/** The part of a rethinkdb-ts feed cursor (a Readable) the feed uses; tests pass a fake. */
export interface FeedCursor {
  on(event: 'data' | 'error' | 'end', listener: (...args: never[]) => void): unknown
  close(): Promise<void>
}

/** A changefeed row as the server sends it with `includeTypes` and `includeStates`. */
export interface FeedRow<T = Record<string, unknown>> {
  type?: 'add' | 'change' | 'remove' | 'initial' | 'uninitial' | 'state'
  state?: 'initializing' | 'ready'
  old_val?: T | null
  new_val?: T | null
  /** Set when the server dropped changes (a consumer too slow for its buffer). */
  error?: string
}

export interface LiveFeedOptions<T> {
  /** For log lines: which feed this is (a table name, "event log"). */
  name: string
  /** Runs a `changes({ includeStates: true, includeTypes: true, … })` query and returns its cursor. */
  open(): Promise<FeedCursor>
  /** Every row but state rows, in the order the server sent them. */
  onRow(row: FeedRow<T>): void
  /** The server said `ready`: the feed is live (after its initial rows, when it asked for them). */
  onReady?(): void
  /** The cursor ended or failed; the feed re-opens (calling `open` again) after a short delay. */
  onLost?(): void
  /** Each change of state: `connecting` (opening, or re-opening after a loss), `live`, `stopped` (for metrics). */
  onState?(state: FeedState): void
  logger: Logger
  initialBackoffMs?: number
  maxBackoffMs?: number
}

/**
 * One changefeed kept open until `stop()`. It is consumed in flowing mode (a paused rethinkdb-ts feed
 * never reports a dropped connection) and re-opened after `error`/`end` — a server restart, a lost
 * primary replica, a network cut — with a backoff capped at one second, so a feed is back within a
 * second of the database. Whether anything is replayed after a re-open is the caller's `open` to
 * decide (see EventLog: it resumes from the last event it saw).
 */
export class LiveFeed<T = Record<string, unknown>> {
  private running = false
  private live = false
  private attempt = 0
  private cursor?: FeedCursor
  private timer?: ReturnType<typeof setTimeout>
  private waiters: { resolve(): void; reject(error: Error): void }[] = []

  constructor(private readonly options: LiveFeedOptions<T>) {}

  get isRunning(): boolean {
    return this.running
  }

  /** True between the server's `ready` and the next lost connection. */
  get isLive(): boolean {
    return this.live
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.options.onState?.('connecting')
    void this.connect()
  }

  async stop(): Promise<void> {
    this.running = false
    this.live = false
    this.options.onState?.('stopped')
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    for (const waiter of this.waiters.splice(0))
      waiter.reject(new Error(`The ${this.options.name} change feed was stopped`))
    const cursor = this.cursor
    this.cursor = undefined
    await cursor?.close().catch(() => undefined)
  }

  /** Resolves once the server confirmed the feed: writes made after this are reported. */
  whenLive(): Promise<void> {
    if (this.live) return Promise.resolve()
    if (!this.running) return Promise.reject(new Error(`The ${this.options.name} change feed is not running`))
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
      if (!this.running) return
      this.options.onState?.('connecting')
      this.options.onLost?.()
      this.retry(reason, error)
    }
    cursor.on('error', ((error: unknown) => finish('failed', error)) as (...args: never[]) => void)
    cursor.on('end', () => finish('ended'))
    // Attaching 'data' last switches the stream to flowing mode once every listener is in place.
    cursor.on('data', ((row: FeedRow<T>) => this.receive(row)) as (...args: never[]) => void)
  }

  private retry(reason: string, error: unknown): void {
    const delay = Math.min(
      (this.options.initialBackoffMs ?? 100) * 2 ** this.attempt,
      this.options.maxBackoffMs ?? 1_000
    )
    this.attempt++
    this.options.logger.warn(`RethinkDB ${this.options.name} change feed ${reason}; re-opening`, {
      retryInMs: delay,
      ...(error === undefined ? {} : { error: driverMessage(error) })
    })
    this.timer = setTimeout(() => void this.connect(), delay)
    // A reconnect timer alone must not keep a process (or a test run) alive.
    this.timer.unref?.()
  }

  private receive(row: FeedRow<T>): void {
    if (typeof row.error === 'string') {
      // The server dropped changes (a client too slow for its 100,000-change buffer): say so.
      this.options.logger.warn(`RethinkDB ${this.options.name} change feed skipped changes`, { error: row.error })
      return
    }
    if (row.state !== undefined) {
      if (row.state === 'ready') this.markLive()
      return
    }
    try {
      this.options.onRow(row)
    } catch (error) {
      // A failing consumer must not end the feed for everyone else.
      this.options.logger.error(`RethinkDB ${this.options.name} change listener failed`, {
        error: driverMessage(error)
      })
    }
  }

  private markLive(): void {
    if (this.live) return
    this.live = true
    this.attempt = 0
    this.options.onState?.('live')
    try {
      this.options.onReady?.()
    } finally {
      for (const waiter of this.waiters.splice(0)) waiter.resolve()
    }
  }
}
