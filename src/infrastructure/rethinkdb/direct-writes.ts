import type { Data } from '../../domain/service/service.js'
import type { StoreChange } from '../../domain/store/store.js'
import { isRecord } from '../../domain/objects.js'
import type { FeedRow } from './live-feed.js'

export interface DirectWritesOptions {
  idField: string
  /**
   * How long a table change waits for the event log to account for it at least (default 1.5 s); longer while the
   * log runs late (see `wait`).
   */
  delayMs?: number
  /**
   * Whether the event log is caught up: live, and holding no event back behind a missing number.
   * While it is not, table changes wait for it (the log may still bring them).
   */
  logCaughtUp(): boolean
  /**
   * Resolves true once the event log has handed out every event numbered by now (false: not yet, ask
   * again later). Asked before publishing changes whose delay is over: a log feed running late (a busy
   * server, a busy instance) is still live and holds nothing back, and would bring them after all.
   * Omitted: no such check.
   */
  logSettled?(): Promise<boolean>
  /**
   * Publishes a change nobody logged: a write made directly in the database. TableWatch logs it, and
   * resolves whether it did: its logged event then comes back through `logged` and is not taken for a
   * store's write.
   */
  publish(change: StoreChange<Data>): void | Promise<boolean>
  now?: () => number
}

/** The longest a table change waits for its logged event, however late the log runs. */
const MAX_WAIT_MS = 30_000

/** How fast a measured lag is forgotten: it counts half after this long. */
const LAG_HALF_LIFE_MS = 60_000

interface Pending {
  key: string
  change: StoreChange<Data>
  /** When the table change came. */
  arrived: number
  /** When it is published unless its logged event comes first. */
  due: number
  /** Its logged event came: it is only still in the queue, to be skipped. */
  matched: boolean
}

/**
 * Tells writes made directly in the database (the admin UI, a script, another program) from the
 * instances' own writes, which arrive through the event log. Every instance watches each table's
 * plain changefeed; a change is matched against logged events by (id, new value):
 *
 * - a logged event arrives first → its table change, when it comes, is dropped;
 * - a table change arrives first → it waits for its logged event (`delayMs`, longer while the log runs late), then is
 *   published as `created`, `patched` or `removed`. While the event log is re-opening, or holds
 *   events back behind a missing number (a write that died after taking it), it waits: the log may
 *   still bring the change, and publishing it meanwhile would publish it twice.
 *
 * The table feed is squashed (TableWatch): several changes of one record within one of its batches
 * come as one change to the last value. The store's own changes then match the event of their last
 * value (the others' expectations expire), and direct writes to one record in quick succession are
 * published as one change, to the value a client would end up with anyway.
 *
 * So a direct write reaches every instance once, `delayMs` late (or more: see `wait`); a write whose log insert failed
 * (the server died mid-query) still comes out this way. Direct writes made while an instance's table
 * feed was down cannot be replayed: only the log can, and nobody logged them.
 */
export class DirectWrites {
  private readonly expected = new Map<string, number[]>()
  private readonly pending = new Map<string, Pending[]>()
  /**
   * Every waiting change in arrival order, so in order of `due` (the delay is the same for all): one
   * timer, for the oldest, instead of one per change. A store's own writes usually reach the table feed
   * before their logged event, so each of them waits here for a moment on every instance.
   */
  private readonly queue: Pending[] = []
  private head = 0
  private timer?: ReturnType<typeof setTimeout>
  private readonly delayMs: number
  private readonly now: () => number
  private pruneAt = 1_000
  /** A logSettled() is under way: its answer publishes what was due when it was asked. */
  private settling = false
  /** Bumped by clear(): an answer to a question asked before it is ignored. */
  private generation = 0
  /** Changes this instance published by logging them, whose logged event has not come back yet. */
  private readonly own = new Map<string, number[]>()
  /** Publishes under way (logging a change takes a query). */
  private publishing = 0
  private readonly drainWaiters: (() => void)[] = []
  /** The longest a table change lately waited for its logged event, and when it was measured (see `wait`). */
  private lag = 0
  private lagAt = 0

  constructor(private readonly options: DirectWritesOptions) {
    this.delayMs = options.delayMs ?? 1_500
    this.now = options.now ?? Date.now
  }

  /** An event of this table arrived through the log. */
  logged(event: string, record: unknown): void {
    if (!isRecord(record)) return
    const key = this.signature(record, event === 'removed' ? null : record)
    if (key === undefined) return
    if (this.takeOwn(key)) return
    const waiting = this.pending.get(key)
    if (waiting?.length) {
      const entry = waiting.shift()!
      entry.matched = true
      this.measured(this.now() - entry.arrived)
      if (waiting.length === 0) this.pending.delete(key)
      return
    }
    if (this.expected.size >= this.pruneAt) this.prune()
    this.remember(this.expected, key)
  }

  /** A row of the table's own changefeed. */
  changed(row: FeedRow<Data>): void {
    const change = toChange(row)
    if (!change) return
    const key = this.signature(change.record, change.event === 'removed' ? null : change.record)
    if (key === undefined) return
    if (this.consumeExpected(key)) return
    const now = this.now()
    const entry: Pending = { key, change, arrived: now, due: now + this.wait(), matched: false }
    const list = this.pending.get(key)
    if (list) list.push(entry)
    else this.pending.set(key, [entry])
    this.queue.push(entry)
    this.arm(entry.due - now)
  }

  /** Drops everything waiting (the store stops watching). */
  clear(): void {
    this.generation++
    this.settling = false
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.pending.clear()
    this.queue.length = 0
    this.head = 0
    this.expected.clear()
    this.own.clear()
    this.drained()
  }

  private arm(delayMs: number): void {
    if (this.timer) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.publishDue()
    }, delayMs)
    this.timer.unref?.()
  }

  /**
   * Publishes the changes whose delay is over and whose logged event never came; waits again for the
   * rest. Before publishing it asks `logSettled`, and publishes (what was due when it asked, and is
   * still unmatched) only once the log has handed out every event numbered by then: under load the
   * log's feed can run more than the delay behind the table's, and its events would then come after
   * their table changes were published as direct writes — twice (156 doubled pairs in a
   * `bench:realtime` run at load average 16, with 4 instances, before this check).
   */
  private publishDue(): void {
    if (this.settling) return
    const { logSettled } = this.options
    if (!logSettled) return this.publishUpTo(this.now())
    const now = this.now()
    while (this.head < this.queue.length && this.queue[this.head]!.matched) this.head++
    if (this.head === this.queue.length) return this.publishUpTo(now)
    if (this.queue[this.head]!.due > now) return this.arm(this.queue[this.head]!.due - now)
    this.settling = true
    const generation = this.generation
    void logSettled()
      .catch(() => false)
      .then((settled) => {
        if (generation !== this.generation) return
        this.settling = false
        if (settled) this.publishUpTo(now)
        else this.arm(this.delayMs)
      })
  }

  /** Publishes the unmatched changes due by `until`; waits again for the rest. */
  private publishUpTo(until: number): void {
    const now = this.now()
    while (this.head < this.queue.length) {
      const entry = this.queue[this.head]!
      if (!entry.matched) {
        if (entry.due > until) break
        // The log may still bring this change (it is re-opening, or holds events behind a gap): keep waiting for it.
        if (!this.options.logCaughtUp()) {
          entry.due = now + this.wait()
          break
        }
        const list = this.pending.get(entry.key)!
        list.splice(list.indexOf(entry), 1)
        if (list.length === 0) this.pending.delete(entry.key)
        // Past it before publishing: a listener may stop the store (clear) meanwhile.
        this.head++
        this.publish(entry)
      } else this.head++
    }
    // Published and matched entries leave the queue's front in one splice now and then, not one shift each.
    if (this.head === this.queue.length) {
      this.queue.length = 0
      this.head = 0
    } else if (this.head >= 1_024) {
      this.queue.splice(0, this.head)
      this.head = 0
    }
    if (this.head < this.queue.length) this.arm(Math.max(0, this.queue[this.head]!.due - now))
    else this.drained()
  }

  private publish(entry: Pending): void {
    const published = this.options.publish(entry.change)
    if (!published) return
    const generation = this.generation
    // Expiring like expectations: a creation is logged with the record's value then, which may be a later one.
    this.remember(this.own, entry.key)
    this.publishing++
    void published
      .catch(() => false)
      .then((logged) => {
        // Not logged: no event comes back for it.
        if (!logged && generation === this.generation) this.takeOwn(entry.key)
        this.publishing--
        this.drained()
      })
  }

  /**
   * Resolves once nothing waits any more: every change has been matched or published (each after its
   * delay, as always) and every publish has ended. For a graceful stop after the table feed closed.
   */
  drain(): Promise<void> {
    if (this.idle()) return Promise.resolve()
    return new Promise((resolve) => this.drainWaiters.push(resolve))
  }

  private idle(): boolean {
    while (this.head < this.queue.length && this.queue[this.head]!.matched) this.head++
    return this.head === this.queue.length && this.publishing === 0
  }

  private drained(): void {
    if (this.drainWaiters.length > 0 && this.idle()) for (const resolve of this.drainWaiters.splice(0)) resolve()
  }

  /**
   * How long a table change arriving now waits for its logged event: the delay, or twice the longest wait a store's
   * write lately had (halved every LAG_HALF_LIFE_MS), at most MAX_WAIT_MS. On a busy server a write's log row can
   * come seconds after its record's change (the query waits for the record's flush before it takes its number), and
   * `logSettled` cannot see a number not taken yet: a fixed 1.5 s then took 8 writes of a 15,000-write live-query
   * oracle for direct writes, logged twice. Direct writes wait longer while the log runs late; the order is kept
   * (a change is published no earlier than its due, and waits for the ones before it).
   */
  private wait(): number {
    return Math.min(MAX_WAIT_MS, Math.max(this.delayMs, 2 * this.recentLag(this.now())))
  }

  /** The longest lag measured lately, halved every LAG_HALF_LIFE_MS since. */
  private recentLag(now: number): number {
    return this.lag * 0.5 ** ((now - this.lagAt) / LAG_HALF_LIFE_MS)
  }

  private measured(lag: number): void {
    const now = this.now()
    if (lag < this.recentLag(now)) return
    this.lag = lag
    this.lagAt = now
  }

  /** Remembers one entry of `key` until it expires (after four waits). */
  private remember(into: Map<string, number[]>, key: string): void {
    const list = into.get(key)
    const expiry = this.now() + this.wait() * 4
    if (list) list.push(expiry)
    else into.set(key, [expiry])
  }

  /** Takes one of this instance's own logged changes of `key`; false when it has none. */
  private takeOwn(key: string): boolean {
    return this.take(this.own, key)
  }

  private consumeExpected(key: string): boolean {
    return this.take(this.expected, key)
  }

  /** Takes the oldest unexpired entry of `key`; false when there is none. */
  private take(from: Map<string, number[]>, key: string): boolean {
    const list = from.get(key)
    if (!list) return false
    const now = this.now()
    while (list.length > 0 && list[0]! <= now) list.shift()
    const found = list.shift() !== undefined
    if (list.length === 0) from.delete(key)
    return found
  }

  /** Expectations whose table change never came (a write that changed nothing) expire, as do own changes (a creation
   * is logged with the record's value then). */
  private prune(): void {
    const now = this.now()
    for (const entries of [this.expected, this.own])
      for (const [key, list] of entries) {
        const live = list.filter((expiry) => expiry > now)
        if (live.length === 0) entries.delete(key)
        else entries.set(key, live)
      }
    this.pruneAt = Math.max(1_000, this.expected.size * 2)
  }

  private signature(record: Record<string, unknown>, value: Record<string, unknown> | null): string | undefined {
    const id = record[this.options.idField]
    if (id === undefined) return undefined
    return `${JSON.stringify(id)}\u0000${value === null ? '-' : canonical(value)}`
  }
}

function toChange(row: FeedRow<Data>): StoreChange<Data> | undefined {
  switch (row.type ?? (row.old_val == null ? 'add' : row.new_val == null ? 'remove' : 'change')) {
    case 'add':
      return row.new_val ? { event: 'created', record: row.new_val } : undefined
    case 'change':
      return row.new_val ? { event: 'patched', record: row.new_val } : undefined
    case 'remove':
      return row.old_val ? { event: 'removed', record: row.old_val } : undefined
    default:
      return undefined
  }
}

/** JSON with object keys sorted, so equal records give equal strings whatever their key order. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (isRecord(value) && !(value instanceof Date)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}
