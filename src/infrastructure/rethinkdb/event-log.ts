import type { R, RDatum, RTable, WriteResult } from 'rethinkdb-ts'
import type { Logger } from '../../domain/logger.js'
import { noMetrics, type Metrics } from '../../domain/metrics.js'
import { driverMessage } from './rethinkdb-errors.js'
import { eventsOf } from './event-log-rows.js'
import {
  COUNTER,
  EventLogWrites,
  MAX_SEQ,
  serverMs,
  type Counter,
  type LoggedEvent,
  type LoggedTable,
  type LogRow,
  type Term,
  type WriteEvent
} from './event-log-writes.js'
import { EventSequence } from './event-sequence.js'
import { ensureTable } from './rethinkdb-tables.js'
import type { LeaseRow } from './row-lease.js'
import { LiveFeed, type FeedCursor, type FeedRow } from './live-feed.js'
import { PositionWaiters, TableSubscribers } from '../store-commons/event-log/index.js'

export type { LoggedEvent, LoggedTable, WriteEvent } from './event-log-writes.js'

export interface EventLogOptions {
  r: R
  db: string
  logger: Logger
  /** The log table (default `plumage_events`), in `db`; its counter row lives in `<table>_counter`. */
  table?: string
  /**
   * How long a missing number holds back the events after it before it is given up (default 5 s):
   * a query that died between taking its number and logging its event leaves such a gap.
   */
  gapMs?: number
  /** How long events are kept (default 10 min): an instance cut off for longer misses events. */
  retentionMs?: number
  replicas?: number
  shards?: number
  /** Where the feed's state and the time of the newest applied event are reported, per table. */
  metrics?: Metrics
  /** The active span's `traceparent` when tracing is on, logged with each event (the Tracer port's). */
  traceparent?: () => string | undefined
}

const PRUNE_EVERY_MS = 60_000

type Written<T> = RDatum<WriteResult<T>>

/** Event logs made by `EventLog.of`, one per pool and database. */
const shared = new WeakMap<R, Map<string, EventLog>>()

/**
 * The event log that gives several app instances on one database every event exactly once.
 *
 * - **Writing** (the ReQL is EventLogWrites'): a store's write, taking numbers from the log's counter row and
 *   inserting its events under them are ONE query (`recording`), run by the server as a whole: an acknowledged
 *   write has its events in the log, whatever happens to the instance that made it, or to the feeds of the others.
 *   The counter row's update is atomic, so the numbers are one total order of the log's events, the same for every
 *   instance (see docs/adr/0007-one-order-for-the-event-log.md).
 * - **Following:** every instance follows the log with `between(next, max).changes({ includeInitial: true })` on
 *   the primary key (the number). After a lost connection, a server restart or a failover it re-opens from the next
 *   number it has not handed out: the rows it missed come as initial rows, then live rows. EventSequence hands each
 *   number out once and in order, so nothing arrives twice, nothing is lost while the log keeps it (`retentionMs`),
 *   and every instance publishes the events in the same order.
 * - **Pruning:** each instance deletes events older than the retention once a minute (idempotent).
 */
export class EventLog {
  readonly tableName: string
  /** The table of the counter row (`<log>_counter`). */
  readonly counterTableName: string
  /** The driver (with its pool) the log queries through; its leases (RowLease) too. */
  readonly r: R
  private readonly db: string
  private readonly logger: Logger
  private readonly retentionMs: number
  private readonly feed: LiveFeed<LogRow>
  private readonly subscribers = new TableSubscribers<LoggedEvent>(
    () => this.start(),
    () => void this.stop()
  )
  private readonly sequence: EventSequence<LogRow>
  private readonly metrics: Metrics
  private readonly waiters = new PositionWaiters<number>((a, b) => a - b)
  /** The writing half: numbering and logging writes' events, the counter and its repair. */
  private readonly writes: EventLogWrites
  private ready?: Promise<void>
  private pruner?: ReturnType<typeof setInterval>
  private logEpoch?: string
  private started?: number
  private current?: number
  /** Server time of the newest event handed out: after a long cut-off, tells that events were pruned. */
  private newestTs?: number

  /** The event log of a database on this `r`, shared by the stores made without one: a process follows it once. */
  static of(r: R, db: string, logger: Logger): EventLog {
    let byDb = shared.get(r)
    if (!byDb) shared.set(r, (byDb = new Map()))
    let log = byDb.get(db)
    if (!log) byDb.set(db, (log = new EventLog({ r, db, logger })))
    return log
  }

  constructor(private readonly options: EventLogOptions) {
    this.r = options.r
    this.db = options.db
    this.logger = options.logger
    this.tableName = options.table ?? 'plumage_events'
    this.counterTableName = `${this.tableName}_counter`
    this.writes = new EventLogWrites({
      r: options.r,
      db: options.db,
      table: this.tableName,
      counterTable: this.counterTableName,
      ...(options.traceparent ? { traceparent: options.traceparent } : {})
    })
    this.retentionMs = options.retentionMs ?? 600_000
    this.sequence = new EventSequence<LogRow>({
      ...(options.gapMs !== undefined ? { gapMs: options.gapMs } : {}),
      span: (row) => eventsOf(row).length,
      release: (row, late) => this.deliver(row, late),
      skipped: (from, to) =>
        this.logger.debug(
          'RethinkDB event log: numbers never logged (a write died between taking them and logging its events, or they were pruned); going on without them',
          { from, to }
        )
    })
    const metrics = (this.metrics = options.metrics ?? noMetrics)
    this.feed = new LiveFeed<LogRow>({
      name: 'event log',
      logger: this.logger,
      open: () => this.open(),
      onRow: (row) => this.receive(row),
      onReady: () => this.sequence.setLive(true),
      onLost: () => this.sequence.setLive(false),
      onState: (state) => metrics.feedState(this.tableName, state)
    })
  }

  /**
   * Creates the log table, its `ts` index, the counter table and its row once per process (every caller awaits the
   * same). A counter row made again (someone deleted it) continues after the newest logged event but with a new
   * epoch: offsets given out before it are unknown. A log whose counter row is still in the log table (made before
   * the counter had a table) keeps its epoch: the row moves.
   */
  setup(): Promise<void> {
    return (this.ready ??= this.create().catch((error: unknown) => {
      this.ready = undefined
      throw error
    }))
  }

  /** The log's epoch (its counter row's), once setup() resolved: offsets of another epoch are unknown. */
  get epoch(): string | undefined {
    return this.logEpoch
  }

  /** The number this process started following after: events up to it happened before it followed. */
  get startedAfter(): number | undefined {
    return this.started
  }

  /** The last number handed out in order (or the starting point); undefined before following. */
  get position(): number | undefined {
    return this.sequence.position
  }

  /**
   * Whether events are held back behind a missing number (for `gapMs` at most): a table change that
   * the log has not brought yet may still come through it.
   */
  get holding(): boolean {
    return this.sequence.holding
  }

  /** The number of the event being handed to subscribers right now, if any (they are called synchronously). */
  get delivering(): number | undefined {
    return this.current
  }

  /** Resolves true once the position reaches `seq`, false when it has not within `timeoutMs`. */
  whenAt(seq: number, timeoutMs: number): Promise<boolean> {
    return this.waiters.whenAt(this.position, seq, timeoutMs)
  }

  /**
   * Resolves true once every event logged by now (the newest logged number, read now) has been handed
   * out; false when not within `timeoutMs`, or when the log cannot be read. DirectWrites asks it before
   * publishing a table change as a direct write: a change whose event is in the log is then known to
   * have come through it, however late the log's feed runs. The newest *logged* number, not the
   * counter's: a number taken by a write that died before logging it never comes, and waiting for it
   * would hold every direct write back until the next logged write. A write whose record is in the
   * table but whose log row is not written yet (its query still in its record's flush, 1.5 s after the
   * table change came) is not covered.
   */
  async settled(timeoutMs: number): Promise<boolean> {
    let newest: number
    try {
      newest = (await this.writes.newest().run()) as number
    } catch {
      return false
    }
    return this.whenAt(newest, timeoutMs)
  }

  /** Read your writes: `settled` (a write acknowledged before the call is logged at most at the newest number). */
  caughtUp(timeoutMs: number): Promise<boolean> {
    return this.settled(timeoutMs)
  }

  private async create(): Promise<void> {
    const placement = {
      primaryKey: 'id',
      ...(this.options.replicas !== undefined ? { replicas: this.options.replicas } : {}),
      ...(this.options.shards !== undefined ? { shards: this.options.shards } : {})
    }
    await ensureTable(
      this.r,
      {
        db: this.db,
        name: this.tableName,
        // `keys` (multi): the log rows of keyed writes, by each of their keys (rethinkdb-keyed-writes.ts).
        indexes: [
          { name: 'ts', fields: ['ts'] },
          { name: 'keys', fields: ['keys'], multi: true }
        ],
        ...placement
      },
      this.logger
    )
    await ensureTable(this.r, { db: this.db, name: this.counterTableName, ...placement }, this.logger)
    const r = this.r
    const earlier = this.r.db(this.db).table<Counter>(this.tableName).get(COUNTER)
    // Of instances starting at once, one inserts the row; the others' conflict is no error here. It
    // continues after the old row's numbers too: numbers taken by writes that died were given up.
    const seq = r.expr([this.writes.newest(), earlier('seq').default(0)]).max()
    await this.writes
      .counterTable()
      .insert({ id: COUNTER, seq, epoch: earlier('epoch').default(r.uuid()) } as never, { conflict: 'error' })
      .run()
    // An instance of an earlier version would go on numbering from the old row: without it, it stops loudly.
    await earlier.delete().run()
    // A counter behind the log (its soft update lost in a crash) starts again after the newest event.
    await this.writes.repair().run()
    const counter = await this.writes.counter().run()
    if (!counter) throw new Error(`The counter row of the RethinkDB event log ${this.db}.${this.tableName} is missing`)
    this.logEpoch = shortEpoch(counter.epoch)
  }

  get isLive(): boolean {
    return this.feed.isLive
  }

  whenLive(): Promise<void> {
    return this.feed.whenLive()
  }

  /** The active span's `traceparent` when tracing is on: what `recording` logs by default. */
  traceparent = (): string | undefined => this.options.traceparent?.()

  /**
   * Wraps a write (run with `returnChanges`) so that the events of its changes are numbered and inserted into the log
   * by the same query (EventLogWrites.recording: `marks`, the keyed writes among it; `trace`, the writer's).
   */
  recording<T>(
    write: Written<T>,
    table: LoggedTable,
    event: WriteEvent,
    marks?: Term,
    trace?: Term | null
  ): Written<T> {
    return this.writes.recording(write, table, event, marks, trace)
  }

  /**
   * Logs a custom event (e.g. `service.emit('archived', data)`): every instance publishes it once. With `guard`,
   * only when that term is true on the server, in the same query; resolves whether it was logged. `written`: the
   * event is a write made directly in that table, checked after its number is taken (EventLogWrites.publish).
   */
  publish(table: string, event: string, record: unknown, guard?: Term, written?: LoggedTable): Promise<boolean> {
    return this.writes.publish(table, event, record, guard, written)
  }

  /** The table of the log's leases (RowLease): the counter's, on every instance, soft writes only (ADR 0012). */
  leases(): RTable<LeaseRow> {
    return this.writes.counterTable() as unknown as RTable<LeaseRow>
  }

  /** The log table's rows, numbered by their first event (the event history reads the log before its start). */
  rows(): RTable<LogRow> {
    return this.writes.table()
  }

  /** Whether this process follows the events of `table` (a store of it subscribed). */
  follows(table: string): boolean {
    return this.subscribers.of(table) !== undefined
  }

  /** Receives the events of one table; the first subscriber starts following the log. */
  subscribe(table: string, listener: (event: LoggedEvent) => void): () => void {
    return this.subscribers.add(table, listener)
  }

  async stop(): Promise<void> {
    if (this.pruner) clearInterval(this.pruner)
    this.pruner = undefined
    await this.feed.stop()
    // A later start follows from its own start, not from where this one stopped.
    this.sequence.reset()
    this.started = undefined
    this.waiters.cancel()
  }

  private start(): void {
    if (this.feed.isRunning) return
    this.feed.start()
    this.pruner = setInterval(() => void this.prune(), Math.min(PRUNE_EVERY_MS, this.retentionMs / 4))
    this.pruner.unref?.()
  }

  private async open(): Promise<FeedCursor> {
    if (!this.sequence.started) {
      // First open: events after the counter's number now (earlier ones happened before this instance).
      const counter = await this.writes.counter().run()
      if (!counter)
        throw new Error(`The counter row of the RethinkDB event log ${this.db}.${this.tableName} is missing`)
      this.sequence.startAfter(counter.seq)
      this.started = counter.seq
      this.logEpoch = shortEpoch(counter.epoch)
    } else if (this.newestTs !== undefined && this.newestTs < (await serverMs(this.r).sub(this.retentionMs).run())) {
      this.logger.warn(
        'RethinkDB event log: this instance was cut off for longer than the retention; events older than it are lost',
        { retentionMs: this.retentionMs }
      )
    }
    return this.writes
      .table()
      .between(this.sequence.position! + 1, MAX_SEQ)
      .changes({ includeInitial: true, includeStates: true, includeTypes: true })
      .run() as Promise<FeedCursor>
  }

  private receive(row: FeedRow<LogRow>): void {
    // Log rows are only ever inserted (and pruned long after): `add` and `initial` carry events.
    if ((row.type !== 'add' && row.type !== 'initial') || !row.new_val || typeof row.new_val.id !== 'number') return
    this.sequence.add(row.new_val)
  }

  private deliver(row: LogRow, late: boolean): void {
    if (late)
      this.logger.debug(
        'RethinkDB event log: an event came after its number was given up; published now, out of order',
        { seq: row.id }
      )
    else this.newestTs = row.ts
    const events = eventsOf(row)
    events.forEach((event, index) => this.hand({ ...event, id: row.id + index, ts: row.ts }))
    if (!late) this.waiters.reached(row.id + events.length - 1)
  }

  /** Hands one event to the subscribers of its table. */
  private hand(entry: LoggedEvent): void {
    if (!this.subscribers.of(entry.table)) return
    this.metrics.eventApplied(entry.table, entry.ts)
    this.current = entry.id
    try {
      this.subscribers.hand(entry.table, entry, (error) =>
        this.logger.error('RethinkDB event listener failed', {
          event: entry.event,
          table: entry.table,
          error: driverMessage(error)
        })
      )
    } finally {
      this.current = undefined
    }
  }

  private async prune(): Promise<void> {
    try {
      const old = this.writes.table().between(this.r.minval, serverMs(this.r).sub(this.retentionMs), { index: 'ts' })
      // One query, one `r.now()`: the rows whose answers it keeps are the rows it deletes (two queries left a gap).
      await this.writes
        .keepAnswers(old as unknown as Term)
        .do(() => old.delete({ durability: 'soft' }))
        .run()
    } catch (error) {
      this.logger.debug('RethinkDB event log pruning failed; the next round tries again', {
        error: driverMessage(error)
      })
    }
  }
}

/** The epoch as offsets carry it: 48 random bits of the counter row's uuid tell one log from a remade one. */
function shortEpoch(uuid: string): string {
  return uuid.replace(/-/g, '').slice(0, 12)
}
