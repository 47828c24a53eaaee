import type { Client } from 'pg'
import { Unavailable } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'
import type { StoreChange } from '../../domain/store/store.js'
import type { Data } from '../../domain/service/service.js'
import type { PostgresDatabase } from './postgres-database.js'
import { CHANNEL, PostgresEventLogWrites } from './postgres-event-log-writes.js'
import { PositionWaiters, TableSubscribers } from '../store-commons/event-log/index.js'
import { LogCatchUp } from './log-catch-up.js'

/** A place in the log's order: the writing transaction's id, then the row's number within the log. */
export interface LogPlace {
  tx: bigint
  id: bigint
}

export interface PostgresEventLogOptions {
  db: PostgresDatabase
  logger: Logger
  /** How long events are kept (default 10 min): an instance cut off for longer misses events. */
  retentionMs?: number
  /** How long whenLive() waits before answering 503 (default 30 s). */
  timeoutMs?: number
}

interface EventRow {
  tx: string
  id: string
  service: string
  event: string
  record: unknown
  trace: string | null
}

const BATCH = 500
const PRUNE_EVERY_MS = 60_000
/** A poll without a notification, in case one was lost (they are not queued while disconnected). */
const SAFETY_POLL_MS = 5_000

type Listener = (change: StoreChange<Data>) => void

/**
 * The outbox that gives several app instances on one database every change exactly once, in one order.
 *
 * - **Writing** (the SQL is PostgresEventLogWrites'): statement-level triggers on every store table
 *   insert the statement's changes into `plumage_events` in the write's own transaction (a write
 *   commits with its events or not at all, direct SQL writes included), and `pg_notify` wakes the
 *   followers once it committed (the store notifies after its writes, see `committed`; the triggers
 *   notify for writes made outside it). The store names the method's event through a
 *   transaction-local setting (`plumage.event`: an UPDATE is `updated` or `patched`); writes made
 *   outside plumage are `created`, `patched` and `removed`.
 * - **Order:** every row carries its transaction's id (`xid8`, never wrapping). A follower reads only
 *   rows of transactions older than the oldest one still running (`pg_snapshot_xmin`): no row can
 *   appear there any more, so `(tx, id)` is a total order of a stable prefix, the same on every
 *   instance, with no gap to wait for and no counter row that would serialize the writes.
 * - **Following:** each instance LISTENs on one connection of its own, reads after the last place it
 *   handed out on every notification (and every few seconds), and after a lost connection or a
 *   server restart resumes from that place: nothing twice, nothing lost while the log keeps it.
 * - **Pruning:** each instance deletes events older than the retention once a minute.
 */
export class PostgresEventLog {
  readonly tableName = 'plumage_events'
  private readonly db: PostgresDatabase
  private readonly logger: Logger
  private readonly retentionMs: number
  private readonly subscribers = new TableSubscribers<StoreChange<Data>>(
    () => this.start(),
    () => void this.stop()
  )
  private readonly liveWaiters = new Set<() => void>()
  private readonly waiters = new PositionWaiters<LogPlace>(comparePlaces)
  private readonly catchUp = new LogCatchUp()
  private ready?: Promise<void>
  private client?: Client
  private running = false
  private live = false
  private reading?: Promise<void>
  private readAgain = false
  private place?: LogPlace
  private startPlace?: LogPlace
  private current?: LogPlace
  private logEpoch?: string
  private retry?: ReturnType<typeof setTimeout>
  /** The next read while events wait for an older transaction (a timer of its own: never the reconnection's). */
  private readSoon?: ReturnType<typeof setTimeout>
  private poller?: ReturnType<typeof setInterval>
  private pruner?: ReturnType<typeof setInterval>
  private backoffMs = 100
  private heldBack = false
  /** The writing half: the log table and its triggers, custom events, the wake-up of the other instances. */
  private readonly writes: PostgresEventLogWrites

  constructor(private readonly options: PostgresEventLogOptions) {
    this.db = options.db
    this.logger = options.logger
    this.retentionMs = options.retentionMs ?? 600_000
    this.writes = new PostgresEventLogWrites(options.db)
  }

  /** The log's epoch (drawn when its table is made): offsets of another epoch are unknown. */
  get epoch(): string | undefined {
    return this.logEpoch
  }

  /** Where this process started following: events at or before it happened before it followed. */
  get startedAfter(): LogPlace | undefined {
    return this.startPlace
  }

  /** The last place handed out (or the starting point); undefined before following. */
  get position(): LogPlace | undefined {
    return this.place
  }

  /** The place of the event being handed to subscribers right now, if any (they are called synchronously). */
  get delivering(): LogPlace | undefined {
    return this.current
  }

  /** Resolves true once the position reaches `place` (read from the log now, not at a notification), else false. */
  whenAt(place: LogPlace, timeoutMs: number): Promise<boolean> {
    const reached = this.waiters.whenAt(this.place, place, timeoutMs)
    if (this.place && comparePlaces(this.place, place) < 0) this.read()
    return reached
  }

  /** Whether this process follows the events of `table` (a store of it subscribed). */
  follows(table: string): boolean {
    return this.subscribers.of(table) !== undefined
  }

  /** For health probes: live, or not following at all (nobody subscribed). */
  get healthy(): boolean {
    return !this.running || this.live
  }

  /** The log table, its epoch and the trigger function; once per process (every caller awaits the same). */
  setup(): Promise<void> {
    return (this.ready ??= this.create().catch((error: unknown) => {
      this.ready = undefined
      throw error
    }))
  }

  /** The statements that make `table`'s triggers log its changes (run by the store's setup, under the schema lock). */
  triggers(table: string): string[] {
    return this.writes.triggers(table)
  }

  /** Logs a custom event (`service.emit('archived', data)`): every instance publishes it once. */
  async publish(table: string, event: string, record: unknown, trace?: string): Promise<void> {
    await this.setup()
    await this.writes.publish(table, event, record, trace)
    this.committed()
  }

  /**
   * Called by a store after a write committed: reads the log here at once, and wakes the other
   * instances (PostgresEventLogWrites.notify).
   */
  committed(): void {
    this.read()
    this.writes.notify()
  }

  /** Receives the events of one table; the first subscriber starts following the log. */
  subscribe(table: string, listener: Listener): () => void {
    return this.subscribers.add(table, listener)
  }

  /** Resolves once the follower listens and knows its place; 503 after `timeoutMs`. */
  async whenLive(): Promise<void> {
    this.start()
    if (this.live) return
    const timeoutMs = this.options.timeoutMs ?? 30_000
    let timer: ReturnType<typeof setTimeout> | undefined
    let waiter: (() => void) | undefined
    try {
      await new Promise<void>((resolve, reject) => {
        waiter = resolve
        this.liveWaiters.add(resolve)
        timer = setTimeout(
          () =>
            reject(
              new Unavailable(`The PostgreSQL event log did not go live within ${Math.round(timeoutMs / 1000)} s`)
            ),
          timeoutMs
        )
      })
    } finally {
      clearTimeout(timer)
      if (waiter) this.liveWaiters.delete(waiter)
    }
  }

  async stop(): Promise<void> {
    this.running = false
    this.setLive(false)
    clearTimeout(this.retry)
    clearTimeout(this.readSoon)
    clearInterval(this.poller)
    clearInterval(this.pruner)
    const client = this.client
    this.client = undefined
    await this.reading?.catch(() => undefined)
    await client?.end().catch(() => undefined)
    // A later start follows from its own start, not from where this one stopped.
    this.place = undefined
    this.startPlace = undefined
    this.waiters.cancel()
    this.catchUp.cancel()
  }

  private start(): void {
    if (this.running) return
    this.running = true
    this.pruner = setInterval(() => void this.prune(), Math.min(PRUNE_EVERY_MS, this.retentionMs / 4))
    this.pruner.unref?.()
    this.poller = setInterval(() => this.read(), SAFETY_POLL_MS)
    this.poller.unref?.()
    void this.connect()
  }

  private async connect(): Promise<void> {
    if (!this.running) return
    try {
      await this.setup()
      const client = await this.db.connect()
      if (!this.running) {
        await client.end().catch(() => undefined)
        return
      }
      client.on('error', (error) => this.lost(client, error))
      client.on('end', () => this.lost(client, new Error('connection ended')))
      client.on('notification', () => this.read())
      await client.query(`LISTEN ${CHANNEL}`)
      if (!this.place) {
        const { rows } = await client.query<{ xmin: string }>(
          'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin'
        )
        this.place = { tx: BigInt(rows[0]!.xmin), id: 0n }
        this.startPlace = this.place
      }
      this.client = client
      this.backoffMs = 100
      this.setLive(true)
      this.read()
    } catch (error) {
      this.logger.warn('PostgreSQL event log: cannot follow the log yet; retrying', {
        error: error instanceof Error ? error.message : String(error)
      })
      this.reconnectLater()
    }
  }

  private lost(client: Client, error: Error): void {
    if (this.client !== client) return
    this.client = undefined
    client.removeAllListeners()
    client.on('error', () => undefined)
    void client.end().catch(() => undefined)
    if (!this.running) return
    this.setLive(false)
    this.logger.warn('PostgreSQL event log: the connection was lost; resuming from the last event handed out', {
      error: error.message
    })
    this.reconnectLater()
  }

  private reconnectLater(): void {
    if (!this.running) return
    clearTimeout(this.retry)
    this.retry = setTimeout(() => void this.connect(), this.backoffMs)
    this.retry.unref?.()
    this.backoffMs = Math.min(this.backoffMs * 2, 5_000)
  }

  /** Reads what follows the current place (one read at a time; a notification during one reads again after it). */
  private read(): void {
    if (!this.client || !this.place) return
    if (this.reading) {
      this.readAgain = true
      return
    }
    this.reading = this.readAll()
      .catch((error: unknown) => {
        // A broken connection also reports through its 'error' event, which reconnects.
        this.logger.debug('PostgreSQL event log: a read failed', {
          error: error instanceof Error ? error.message : String(error)
        })
      })
      .finally(() => {
        this.reading = undefined
        if (this.readAgain) {
          this.readAgain = false
          this.read()
        } else if (this.heldBack) {
          // Events of a transaction that committed after an older one still running: read again soon.
          clearTimeout(this.readSoon)
          this.readSoon = setTimeout(() => this.read(), 20)
          this.readSoon.unref?.()
        }
      })
  }

  private async readAll(): Promise<void> {
    for (;;) {
      const client = this.client
      const place = this.place
      if (!client || !place) return
      // One row at least (the snapshot's, events or not): its xmin and xmax tell read-your-writes what it covered.
      // Ordered by the columns, not by the text columns of the same names the SELECT makes ('10' < '9').
      const seq = this.catchUp.issue()
      const { rows } = await client.query<Partial<EventRow> & { held: boolean; xmin: string; xmax: string }>(
        `SELECT s.xmin::text AS xmin, s.xmax::text AS xmax, s.held, e.tx::text AS tx, e.id::text AS id, e.service,
           e.event, e.record, e.trace
         FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin, pg_snapshot_xmax(pg_current_snapshot()) AS xmax,
           EXISTS (SELECT 1 FROM plumage_events WHERE tx >= pg_snapshot_xmin(pg_current_snapshot())) AS held) s
         LEFT JOIN LATERAL (SELECT tx, id, service, event, record, trace FROM plumage_events
           WHERE (tx, id) > ($1::xid8, $2::bigint) AND tx < s.xmin
           ORDER BY plumage_events.tx, plumage_events.id LIMIT ${BATCH}) e ON true
         ORDER BY e.tx, e.id`,
        [place.tx.toString(), place.id.toString()]
      )
      if (client !== this.client) return
      const events = rows[0]?.tx == null ? [] : (rows as EventRow[])
      for (const row of events) this.deliver(row)
      this.heldBack = rows[0]?.held ?? false
      const snapshot = rows[0]
      if (snapshot) this.catchUp.done(seq, BigInt(snapshot.xmin), BigInt(snapshot.xmax), events.length < BATCH)
      if (events.length < BATCH) return
    }
  }

  /** Resolves true once every event of the writes committed before the call was handed out, false after `timeoutMs`. */
  caughtUp(timeoutMs: number): Promise<boolean> {
    if (!this.running) return Promise.resolve(false)
    return this.catchUp.wait(timeoutMs, () => this.read())
  }

  private deliver(row: EventRow): void {
    const place = { tx: BigInt(row.tx), id: BigInt(row.id) }
    // Each place is handed out once, whatever reads overlap.
    if (this.place && comparePlaces(this.place, place) >= 0) return
    this.place = place
    const change: StoreChange<Data> = {
      event: row.event,
      record: row.record as Data,
      ...(row.trace ? { trace: row.trace } : {})
    }
    this.current = place
    try {
      this.subscribers.hand(row.service, change, (error) =>
        this.logger.error('PostgreSQL event listener failed', {
          event: row.event,
          table: row.service,
          error: error instanceof Error ? error.message : String(error)
        })
      )
    } finally {
      this.current = undefined
    }
    this.waiters.reached(place)
  }

  private setLive(live: boolean): void {
    this.live = live
    if (live) for (const resolve of [...this.liveWaiters]) resolve()
  }

  private async create(): Promise<void> {
    await this.db.schema('create the event log', this.writes.schema())
    const { rows } = await this.db.query<{ value: string }>(
      'create the event log',
      "SELECT value FROM plumage_meta WHERE name = 'events epoch'"
    )
    this.logEpoch = rows[0]!.value
  }

  private async prune(): Promise<void> {
    try {
      await this.db.query(
        'prune the event log',
        'DELETE FROM plumage_events WHERE at < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $1::bigint',
        [this.retentionMs]
      )
    } catch (error) {
      this.logger.debug('PostgreSQL event log pruning failed; the next round tries again', {
        error: error instanceof Error ? error.message : String(error)
      })
    }
  }
}

/** Negative when `a` comes before `b` in the log's order (transaction, then row), 0 for the same place. */
export function comparePlaces(a: LogPlace, b: LogPlace): number {
  return a.tx !== b.tx ? (a.tx < b.tx ? -1 : 1) : a.id === b.id ? 0 : a.id < b.id ? -1 : 1
}
