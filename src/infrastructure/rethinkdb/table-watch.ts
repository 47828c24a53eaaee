import { randomUUID } from 'node:crypto'
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
import { RowLease } from './row-lease.js'

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

/** A graceful stop waits this long at most for the changes its table feed brought to be logged or matched. */
const DRAIN_TIMEOUT_MS = 5_000

/**
 * The events of one table, for RethinkDbStore's `watch`: the table's rows of the event log, plus the
 * writes made directly in the database. The first listener starts following the log; the last one to
 * leave stops.
 *
 * Direct writes: one instance at a time follows the table's plain changefeed — the holder of the
 * table's lease (RowLease, `direct-writes:<table>` in the log's counter table), taken by whichever
 * instance asks first and renewed every second. It matches the feed's changes against the log
 * (DirectWrites) and logs the ones nobody logged, so they reach every instance through the log like
 * any write: in the log's order, exactly once, and replayed to clients that resume. The log query
 * runs only while the lease's row still names this instance (its `guard`), and an instance logs only
 * what its own feed brought while it held the lease; a new holder's feed opens after it took the
 * lease. So no change is logged twice. When the holder dies, another instance takes over within the
 * lease's 5 s; when it stops, it closes its feed, logs what the feed brought, then lets go, and the
 * next one takes over within a second. Changes made in between are not published (as while a table
 * feed re-opens: a changefeed cannot be replayed).
 */
export class TableWatch {
  private readonly listeners = new Set<Listener>()
  private readonly tableFeed?: LiveFeed
  private readonly direct?: DirectWrites
  private readonly lease?: RowLease
  /** This instance holds the lease and follows the table's feed. */
  private following = false
  private unsubscribe?: () => void
  /** A stop under way (the follower drains first): a listener that comes meanwhile starts after it. */
  private stopping?: Promise<void>

  constructor(private readonly options: TableWatchOptions) {
    const { events, directWrites, tableName, logger } = options
    if (directWrites) {
      const lease = new RowLease({
        r: events.r,
        table: () => events.leases(),
        id: `direct-writes:${tableName}`,
        holder: randomUUID(),
        name: `direct writes of ${tableName}`,
        logger,
        onAcquired: () => this.follow(),
        onLost: () => this.unfollow('lost')
      })
      this.lease = lease
      const written = () => ({ name: tableName, idField: options.idField, term: directWrites() })
      const direct = new DirectWrites({
        idField: options.idField,
        logCaughtUp: () => events.isLive && !events.holding,
        logSettled: () => events.settled(SETTLE_TIMEOUT_MS),
        publish: (change) =>
          events
            // Only while the lease is held; checked after its number is taken, as a store's write is (superseded).
            .publish(tableName, change.event, change.record, lease.guard(), written())
            .catch((error: unknown) => {
              logger.error('RethinkDB: could not log a write made directly in the database; it is not published', {
                table: tableName,
                event: change.event,
                error: driverMessage(error)
              })
              return false
            })
      })
      this.direct = direct
      this.tableFeed = new LiveFeed({
        name: `${tableName} table`,
        logger,
        open: () =>
          directWrites()
            .changes({ includeTypes: true, includeStates: true, squash: DIRECT_WRITES_SQUASH_S })
            .run() as Promise<FeedCursor>,
        onRow: (row) => direct.changed(row as never),
        ...(options.metrics ? { onState: (state) => options.metrics!.feedState(tableName, state) } : {})
      })
    }
  }

  /** Whether this instance follows the table's feed for direct writes (it holds the lease). */
  get followsDirectWrites(): boolean {
    return this.following
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener)
    this.start()
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
    const feeds = Promise.all([this.options.events.whenLive(), this.directWritesLive()])
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

  /**
   * Once the lease's first attempt was answered: live when another instance follows the table, or when
   * this one does and its feed is live.
   */
  private async directWritesLive(): Promise<void> {
    if (!this.lease) return
    await this.lease.whenAnswered()
    if (this.following) await this.tableFeed!.whenLive()
  }

  /** Whether the feeds are live right now (for health probes); true while nobody listens. */
  get isLive(): boolean {
    if (this.listeners.size === 0) return true
    return this.options.events.isLive && (!this.following || this.tableFeed!.isLive)
  }

  /**
   * Stops following. The holder of the lease closes its table feed first, then publishes (logs) what
   * it brought — each change after its usual delay, at most DRAIN_TIMEOUT_MS in all — and lets go of the
   * lease last, so the next holder opens its feed only after this one closed (see the class's comment).
   */
  stop(): Promise<void> {
    this.listeners.clear()
    return (this.stopping ??= this.halt().finally(() => (this.stopping = undefined)))
  }

  /** Follows the log (and asks for the lease); after a stop under way, once it is over. */
  private start(): void {
    if (this.stopping) {
      void this.stopping.then(() => {
        if (this.listeners.size > 0) this.start()
      })
      return
    }
    if (this.unsubscribe) return
    this.unsubscribe = this.options.events.subscribe(this.options.tableName, ({ event, record, trace, superseded }) => {
      if (this.following) this.direct!.logged(event, record)
      // Its table change is matched above; its effect comes with a later event of the record.
      if (superseded) return
      this.emit({ event, record: record as Data, ...(trace === undefined ? {} : { trace }) })
    })
    this.lease?.start()
  }

  private async halt(): Promise<void> {
    if (this.following) {
      await this.tableFeed!.stop()
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([
        this.direct!.drain(),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, DRAIN_TIMEOUT_MS)))
      ])
      clearTimeout(timer)
    }
    await this.lease?.stop()
    this.unfollow('stopped')
    this.unsubscribe?.()
    this.unsubscribe = undefined
  }

  private follow(): void {
    if (this.following) return
    this.following = true
    this.options.logger.info('RethinkDB: this instance now publishes the writes made directly in the table', {
      table: this.options.tableName
    })
    this.tableFeed!.start()
  }

  private unfollow(why: 'lost' | 'stopped'): void {
    if (!this.following && why === 'stopped') return
    if (why === 'lost')
      this.options.logger.warn(
        'RethinkDB: this instance lost the lease on publishing direct writes of the table (another instance has it, or the database did not answer); it stops following the table',
        { table: this.options.tableName }
      )
    this.following = false
    this.direct!.clear()
    void this.tableFeed!.stop()
  }
}
