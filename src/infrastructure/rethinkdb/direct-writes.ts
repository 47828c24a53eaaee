import type { Data } from '../../domain/service/service.js'
import type { StoreChange } from '../../domain/store/store.js'
import { isRecord } from '../../domain/objects.js'
import type { FeedRow } from './live-feed.js'

export interface DirectWritesOptions {
  idField: string
  /** How long a table change waits for the event log to account for it (default 1.5 s). */
  delayMs?: number
  /**
   * Whether the event log is caught up: live, and holding no event back behind a missing number.
   * While it is not, table changes wait for it (the log may still bring them).
   */
  logCaughtUp(): boolean
  /** Publishes a change nobody logged: a write made directly in the database. */
  publish(change: StoreChange<Data>): void
  now?: () => number
}

interface Pending {
  change: StoreChange<Data>
  timer: ReturnType<typeof setTimeout>
}

/**
 * Tells writes made directly in the database (the admin UI, a script, another program) from the
 * instances' own writes, which arrive through the event log. Every instance watches each table's
 * plain changefeed; a change is matched against logged events by (id, new value):
 *
 * - a logged event arrives first → its table change, when it comes, is dropped;
 * - a table change arrives first → it waits up to `delayMs` for its logged event, then is
 *   published as `created`, `patched` or `removed`. While the event log is re-opening, or holds
 *   events back behind a missing number (a write that died after taking it), it waits: the log may
 *   still bring the change, and publishing it meanwhile would publish it twice.
 *
 * So a direct write reaches every instance once, `delayMs` late; a write whose log insert failed
 * (the server died mid-query) still comes out this way. Direct writes made while an instance's table
 * feed was down cannot be replayed: only the log can, and nobody logged them.
 */
export class DirectWrites {
  private readonly expected = new Map<string, number[]>()
  private readonly pending = new Map<string, Pending[]>()
  private readonly delayMs: number
  private readonly now: () => number
  private pruneAt = 1_000

  constructor(private readonly options: DirectWritesOptions) {
    this.delayMs = options.delayMs ?? 1_500
    this.now = options.now ?? Date.now
  }

  /** An event of this table arrived through the log. */
  logged(event: string, record: unknown): void {
    if (!isRecord(record)) return
    const key = this.signature(record, event === 'removed' ? null : record)
    if (key === undefined) return
    const waiting = this.pending.get(key)
    if (waiting?.length) {
      clearTimeout(waiting.shift()!.timer)
      if (waiting.length === 0) this.pending.delete(key)
      return
    }
    if (this.expected.size >= this.pruneAt) this.prune()
    const list = this.expected.get(key) ?? []
    list.push(this.now() + this.delayMs * 4)
    this.expected.set(key, list)
  }

  /** A row of the table's own changefeed. */
  changed(row: FeedRow<Data>): void {
    const change = toChange(row)
    if (!change) return
    const key = this.signature(change.record, change.event === 'removed' ? null : change.record)
    if (key === undefined) return
    if (this.consumeExpected(key)) return
    const entry: Pending = { change, timer: this.arm(key, change) }
    const list = this.pending.get(key) ?? []
    list.push(entry)
    this.pending.set(key, list)
  }

  /** Drops everything waiting (the store stops watching). */
  clear(): void {
    for (const list of this.pending.values()) for (const entry of list) clearTimeout(entry.timer)
    this.pending.clear()
    this.expected.clear()
  }

  private arm(key: string, change: StoreChange<Data>): ReturnType<typeof setTimeout> {
    const timer = setTimeout(() => {
      const list = this.pending.get(key)
      const entry = list?.find((item) => item.change === change)
      if (!list || !entry) return
      // The log may still bring this change (it is re-opening, or holds events behind a gap): keep waiting for it.
      if (!this.options.logCaughtUp()) {
        entry.timer = this.arm(key, change)
        return
      }
      list.splice(list.indexOf(entry), 1)
      if (list.length === 0) this.pending.delete(key)
      this.options.publish(change)
    }, this.delayMs)
    timer.unref?.()
    return timer
  }

  private consumeExpected(key: string): boolean {
    const list = this.expected.get(key)
    if (!list) return false
    const now = this.now()
    while (list.length > 0 && list[0]! <= now) list.shift()
    const found = list.shift() !== undefined
    if (list.length === 0) this.expected.delete(key)
    return found
  }

  /** Expectations whose table change never came (a write that changed nothing) expire. */
  private prune(): void {
    const now = this.now()
    for (const [key, list] of this.expected) {
      const live = list.filter((expiry) => expiry > now)
      if (live.length === 0) this.expected.delete(key)
      else this.expected.set(key, live)
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
