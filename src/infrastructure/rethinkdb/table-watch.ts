import type { RTable } from 'rethinkdb-ts'
import { Unavailable } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'
import type { Metrics } from '../../domain/metrics.js'
import type { Data } from '../../domain/service/service.js'
import type { StoreChange } from '../../domain/store/store.js'
import { DirectWrites } from './direct-writes.js'
import type { EventLog } from './event-log.js'
import { driverMessage } from './rethinkdb-errors.js'
import { LiveFeed, type FeedCursor } from './live-feed.js'

export interface TableWatchOptions {
  tableName: string
  idField: string
  /** The database's event log: the store's own writes (and custom events) come from it. */
  events: EventLog
  /** The table, for its plain changefeed; omitted: writes made directly in the database are not published. */
  directWrites?: () => RTable<Data>
  /** How long whenLive() waits before answering 503 (default 30 s). */
  timeoutMs?: number
  logger: Logger
  /** Where the table feed's state is reported. */
  metrics?: Metrics
}

type Listener = (change: StoreChange<Data>) => void

/**
 * How long the server gathers a table feed's changes before sending them (`squash`, in seconds). The
 * table feed carries every write of the table — above all the store's own, which the log brings anyway
 * — and unsquashed the server sent about one message per two records (each answered by a `CONTINUE`):
 * with 4 instances' feeds open, a 5-record write cost the server 0.90× the CPU with this, and the feeds
 * sent 7 messages instead of 13 (docs/adr/0013-fewer-feed-messages.md). Direct writes wait 1.5 s for
 * the log anyway (DirectWrites); what a batch squashes is several changes of one record, delivered as
 * one change to its last value.
 */
const DIRECT_WRITES_SQUASH_S = 0.05

/** How long a direct write waits for the log to hand out what was numbered before asking again. */
const SETTLE_TIMEOUT_MS = 1_500

/**
 * The events of one table, for RethinkDbStore's `watch`: the table's rows of the event log, plus the
 * writes made directly in the database (its plain changefeed, matched against the log by
 * DirectWrites). The first listener starts both feeds; the last one to leave stops them.
 */
export class TableWatch {
  private readonly listeners = new Set<Listener>()
  private readonly tableFeed?: LiveFeed
  private readonly direct?: DirectWrites
  private unsubscribe?: () => void

  constructor(private readonly options: TableWatchOptions) {
    const { events, directWrites } = options
    if (directWrites) {
      const direct = new DirectWrites({
        idField: options.idField,
        logCaughtUp: () => events.isLive && !events.holding,
        logSettled: () => events.settled(SETTLE_TIMEOUT_MS),
        publish: (change) => this.emit(change)
      })
      this.direct = direct
      this.tableFeed = new LiveFeed({
        name: `${options.tableName} table`,
        logger: options.logger,
        open: () =>
          directWrites()
            .changes({ includeTypes: true, includeStates: true, squash: DIRECT_WRITES_SQUASH_S })
            .run() as Promise<FeedCursor>,
        onRow: (row) => direct.changed(row as never),
        ...(options.metrics ? { onState: (state) => options.metrics!.feedState(options.tableName, state) } : {})
      })
    }
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener)
    if (!this.unsubscribe) {
      this.unsubscribe = this.options.events.subscribe(this.options.tableName, ({ event, record, trace }) => {
        this.direct?.logged(event, record)
        this.emit({ event, record: record as Data, ...(trace === undefined ? {} : { trace }) })
      })
      this.tableFeed?.start()
    }
    return () => {
      this.listeners.delete(listener)
      if (this.listeners.size === 0) void this.stop()
    }
  }

  /** Delivers a change to the listeners (custom events of a store that does not log them). */
  emit(change: StoreChange<Data>): void {
    for (const listener of this.listeners) {
      try {
        listener(change)
      } catch (error) {
        // A failing listener must not keep the others from the event.
        this.options.logger.error('RethinkDB change listener failed', {
          event: change.event,
          error: driverMessage(error)
        })
      }
    }
  }

  /**
   * Resolves when every change made from now on will be published: the event log and the table
   * feed are live. Bounded by `timeoutMs` (503 after it), so setup never hangs on a lost database.
   */
  async whenLive(): Promise<void> {
    const feeds = Promise.all([this.options.events.whenLive(), this.tableFeed?.whenLive()])
    // Stopped after a timeout already answered: nobody waits for this rejection any more.
    feeds.catch(() => undefined)
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeoutMs = this.options.timeoutMs ?? 30_000
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Unavailable(
              `The RethinkDB change feeds of ${this.options.tableName} did not go live within ${Math.round(timeoutMs / 1000)} s`
            )
          ),
        timeoutMs
      )
    })
    try {
      await Promise.race([feeds, timedOut])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Whether the feeds are live right now (for health probes); true while nobody listens. */
  get isLive(): boolean {
    if (this.listeners.size === 0) return true
    return this.options.events.isLive && (this.tableFeed?.isLive ?? true)
  }

  async stop(): Promise<void> {
    this.listeners.clear()
    this.unsubscribe?.()
    this.unsubscribe = undefined
    this.direct?.clear()
    await this.tableFeed?.stop()
  }
}
