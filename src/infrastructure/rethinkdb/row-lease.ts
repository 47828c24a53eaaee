import type { R, RDatum, RTable } from 'rethinkdb-ts'
import type { Logger } from '../../domain/logger.js'
import type { Term } from './event-log-writes.js'
import { driverMessage } from './rethinkdb-errors.js'

/** A lease's row: who holds it, and until when (the server's clock). */
export interface LeaseRow {
  id: string
  holder: string
  until: Date
}

export interface RowLeaseOptions {
  r: R
  /** The table of the lease's row (it must exist: the lease is retried until it does). */
  table: () => RTable<LeaseRow>
  /** The row's id: one lease per id. */
  id: string
  /** Who asks: an id of its own per process (and per lease user), never shared. */
  holder: string
  /** For log lines: what the lease is for ("direct writes of messages"). */
  name: string
  /** How long a taken or renewed lease lasts without a renewal (default 5 s). */
  ttlMs?: number
  /** How often the holder renews, and the others try to take it (default ttl / 5). */
  renewMs?: number
  logger: Logger
  /** This process now holds the lease. */
  onAcquired(): void
  /** This process no longer holds it (renewals failed until its deadline, or another holder took it). */
  onLost(): void
  /** A monotonic clock in ms (default performance.now). */
  clock?: () => number
}

/**
 * One holder at a time for a role that any instance can play (the direct-writes follower of a table):
 * a row `{ id, holder, until }` that an instance takes when it is missing, expired or already its own,
 * and renews every `renewMs` for `ttlMs` — one conditional `replace`, atomic on the row, with the
 * server's clock, so instances' clocks never matter. The others try every `renewMs` and take over once
 * `until` has passed on the server: within `ttlMs` after the holder died, within `renewMs` after it let
 * go (`stop`).
 *
 * The holder counts itself as holding until the time it sent its last successful renewal plus 80 % of
 * `ttlMs` on its own monotonic clock, which ends before the server's `until`. That is for deciding what
 * to run; work that must never be done twice checks the row on the server in its own query (`guard`).
 *
 * Writes are soft: a lease changes hands a few times a day and is renewed once a second, and hard
 * writes would queue the event log counter's soft updates behind their flushes (ADR 0012). A crash of
 * the server may lose the latest renewal, so the row can then say "expired" early: another instance
 * takes over and the former holder's `guard` fails from then on.
 */
export class RowLease {
  private readonly ttlMs: number
  private readonly renewMs: number
  private readonly clock: () => number
  /** Until when this process counts itself the holder (0: it does not). */
  private deadline = 0
  private running = false
  private timer?: ReturnType<typeof setTimeout>
  /** Fires at the deadline: a renewal still out (a database that does not answer) does not extend it. */
  private expiry?: ReturnType<typeof setTimeout>
  private attempt?: Promise<void>
  private answered = false
  private readonly answerWaiters: (() => void)[] = []

  constructor(private readonly options: RowLeaseOptions) {
    this.ttlMs = options.ttlMs ?? 5_000
    this.renewMs = options.renewMs ?? this.ttlMs / 5
    this.clock = options.clock ?? (() => performance.now())
  }

  /** Whether this process holds the lease now (by its own clock, see the class's comment). */
  get held(): boolean {
    return this.deadline > this.clock()
  }

  /** Starts taking and renewing the lease. */
  start(): void {
    if (this.running) return
    this.running = true
    this.tick()
  }

  /** Resolves once the server answered a first attempt (whoever got the lease), or the lease stopped. */
  whenAnswered(): Promise<void> {
    if (this.answered || !this.running) return Promise.resolve()
    return new Promise((resolve) => this.answerWaiters.push(resolve))
  }

  /**
   * A term true while the row still names this holder and has not expired, for a query that must run
   * only under the lease.
   */
  guard(): RDatum<boolean> {
    const { r } = this.options
    const row = this.row()
    return row('holder').default(null).eq(this.options.holder).and(row('until').default(r.minval).gt(r.now()))
  }

  /** Stops renewing and, when held, lets go of the lease so another instance takes it at its next try. */
  async stop(): Promise<void> {
    this.running = false
    clearTimeout(this.timer)
    clearTimeout(this.expiry)
    this.timer = undefined
    this.settleWaiters()
    await this.attempt
    if (this.deadline === 0) return
    this.deadline = 0
    const { r, holder } = this.options
    await this.row()
      .replace((row: Term) => r.branch(row.ne(null).and(row('holder').eq(holder)), null, row), { durability: 'soft' })
      .run()
      .catch((error: unknown) =>
        this.options.logger.warn(`RethinkDB lease "${this.options.name}": could not let go of it; it expires`, {
          error: driverMessage(error)
        })
      )
  }

  private row() {
    return this.options.table().get(this.options.id)
  }

  private tick(): void {
    this.timer = undefined
    this.attempt = this.renew().finally(() => {
      this.attempt = undefined
      if (!this.running) return
      this.timer = setTimeout(() => this.tick(), this.renewMs)
      // A lease alone must not keep a process (or a test run) alive.
      this.timer.unref?.()
    })
  }

  private async renew(): Promise<void> {
    const { r, holder, id } = this.options
    const sent = this.clock()
    let mine: boolean
    try {
      mine = await this.row()
        .replace(
          (row: Term) =>
            r.branch(
              row.eq(null).or(row('holder').eq(holder)).or(row('until').lt(r.now())),
              { id, holder, until: r.now().add(this.ttlMs / 1000) },
              row
            ),
          { durability: 'soft', returnChanges: 'always' }
        )
        .do((result: Term) => result('changes').nth(0)('new_val')('holder').default(null).eq(holder))
        .run()
    } catch (error) {
      this.options.logger.debug(`RethinkDB lease "${this.options.name}": an attempt failed; the next one tries again`, {
        error: driverMessage(error)
      })
      return
    }
    this.answered = true
    this.settleWaiters()
    if (!this.running) {
      // Stopped while this attempt was out: stop() lets go of what it got.
      if (mine) this.deadline = sent + this.ttlMs * 0.8
      return
    }
    if (mine) {
      const acquired = this.deadline === 0
      this.hold(sent + this.ttlMs * 0.8)
      if (acquired) this.options.onAcquired()
    } else if (this.deadline !== 0) this.lose()
  }

  private hold(deadline: number): void {
    this.deadline = deadline
    clearTimeout(this.expiry)
    this.expiry = setTimeout(
      () => {
        if (this.deadline !== 0 && !this.held) this.lose()
      },
      Math.max(0, deadline - this.clock()) + 1
    )
    this.expiry.unref?.()
  }

  private lose(): void {
    clearTimeout(this.expiry)
    this.deadline = 0
    this.options.onLost()
  }

  private settleWaiters(): void {
    for (const resolve of this.answerWaiters.splice(0)) resolve()
  }
}
