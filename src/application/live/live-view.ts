import type { StoreQuery } from '../../domain/query/ast.js'
import type { Doc } from '../../domain/query/field-getter.js'
import { diff, LiveWindow, sameValue, type WindowChange, type WindowUpdate } from '../../domain/query/live-window.js'
import { project } from '../../domain/query/project.js'

/** One client's subscription to a view: how it receives frames, and the list it holds. */
export interface Watch {
  readonly id: string
  /** Sends one `live` frame to the client. */
  send(frame: LiveFrame): void
  /** The list the client holds (what it was sent), once it was given its first result. */
  list?: Doc[]
}

/** A `live` frame: the changes of one watch after the event at `offset`. */
export interface LiveFrame {
  id: string
  offset?: string
  changes: WindowChange[]
}

/** What a view needs from the app: a read of its query (as one of its watchers' `find`), and its feed's position. */
export interface ViewSource {
  /** The matching records (sorted, at most `limit`, no `$skip`), as the watcher's `find` returns them. */
  read(limit: number | undefined): Promise<Doc[]>
  /** The offset of the latest event the feed handed over (undefined when no extension records events). */
  head(): string | undefined
  /** The ids of the records the view holds after a read (and the writes heard meanwhile). */
  held(ids: unknown[]): void
  /** The view began (true) or ended (false) a read: while it reads, every write of its service must reach it. */
  reading(busy: boolean): void
  /** Forgets the view: it must read again and has no watcher to read as (kept after its last watch left). */
  drop(): void
}

interface Pending {
  id: unknown
  record: Doc | undefined
  offset: string | undefined
}

/** How long a failed refill waits before it reads again. */
const RETRY_MS = 1000

/** How many times one catch-up may read again because writes emptied the buffer meanwhile. */
const MAX_READS = 5

/**
 * One live query shared by every identical watch (same service, query and rule set): a LiveWindow over the records
 * as the watchers' `find` returns them (projected by their rules, without `$select`), kept up to date by the app's
 * events, and the list its watchers hold (with `$select`). While it reads the store (its first read, a refill), the
 * events it hears wait, and are applied after the read as upserts and removals of whole records: an event the read
 * already saw changes nothing, a later one is applied on top, so there is no gap and no duplicate.
 */
export class LiveView {
  readonly watches = new Set<Watch>()
  /** A written record as the view's watchers may read it (their rules' filter and projection), undefined if hidden. */
  visible: (record: Doc) => Doc | undefined = (record) => record
  readonly window: LiveWindow
  /** The window with `$select` applied: what every watcher in step holds. */
  list: Doc[] = []
  /** The offset the list is current at while events wait (undefined: the feed's head). */
  private offset: string | undefined
  private pending: Pending[] | undefined = []
  private readonly selected = new WeakMap<Doc, Doc>()
  /** Settles once the first read is applied; rejects with its error (an invalid query). */
  readonly ready: Promise<void>
  /** The read in progress (first or refill), settled either way. */
  private reading: Promise<void> = Promise.resolve()

  constructor(
    readonly key: string,
    readonly path: string,
    query: StoreQuery,
    private readonly idField: string,
    buffer: number,
    private readonly source: ViewSource,
    private readonly failed: (error: unknown) => void
  ) {
    this.window = new LiveWindow(query, idField, buffer)
    this.offset = source.head()
    // Read once the view's first watch joined it and it is filed for the feed (writes from now on wait for it).
    this.ready = Promise.resolve().then(() => this.catchUp(true))
    this.reading = this.ready.catch(() => undefined)
  }

  /** Read your writes: resolves once the events heard so far are applied (after the read in progress, if any). */
  async settled(): Promise<void> {
    if (this.pending) await this.reading
  }

  /** Reads the query again (a write it was offered could not be resolved): its watchers get the difference. */
  resync(): void {
    if (!this.pending) this.refill()
  }

  /** Whether a read is in progress (its first, or a refill): the events it hears wait. */
  get busy(): boolean {
    return this.pending !== undefined
  }

  /** The offset the list is current at. */
  get current(): string | undefined {
    return this.pending ? this.offset : this.source.head()
  }

  /** A write this view may concern: `record` as its watchers would read it, undefined if removed or hidden. */
  offer(id: unknown, record: Doc | undefined, offset: string | undefined): void {
    if (this.pending) return void this.pending.push({ id, record, offset })
    const update = this.apply(id, record)
    if (!update) return
    this.publish(offset, update.changes)
    if (update.refill) this.refill()
  }

  /** Whether the view knows a record with this id (in its window, before it or in its buffer). */
  holds(id: unknown): boolean {
    return this.window.knows(id)
  }

  /** Applies one write, and answers what it did to the window; a write that changes nothing is skipped. */
  private apply(id: unknown, record: Doc | undefined): WindowUpdate | undefined {
    const known = this.window.known(id)
    if (record !== undefined && known !== undefined && sameValue(known, record)) return undefined
    if (record === undefined && known === undefined) return undefined
    return this.window.apply(id, record)
  }

  private refill(): void {
    if (this.watches.size === 0) return this.source.drop()
    this.reading = this.catchUp(false)
  }

  /** Reads the query (again), applies the writes heard meanwhile, and tells watchers what changed. */
  private async catchUp(first: boolean): Promise<void> {
    // A new read: the list is current at the head until the writes heard meanwhile are applied.
    if (!this.pending) {
      this.pending = []
      this.offset = this.source.head()
      this.source.reading(true)
    }
    try {
      for (let reads = 0; reads < MAX_READS; reads++) {
        this.window.reset(await this.source.read(this.window.readLimit))
        let refill = false
        for (const write of this.pending.splice(0)) {
          refill = this.apply(write.id, write.record)?.refill === true || refill
          if (write.offset !== undefined) this.offset = write.offset
        }
        if (!refill) break
      }
    } catch (error) {
      if (first) {
        this.pending = undefined
        this.source.reading(false)
        throw error
      }
      // The writes heard stay pending: the next attempt applies them after its read.
      this.failed(error)
      if (this.watches.size > 0) setTimeout(() => this.refill(), RETRY_MS).unref()
      return
    }
    this.pending = undefined
    this.source.reading(false)
    this.source.held(this.window.held())
    if (first) this.list = this.selectedWindow()
    else this.publish(this.offset ?? this.source.head())
  }

  /**
   * Sends the watchers in step the changes from the list they hold to the window as it is: `changes`, when the window
   * gave them for one write and no `$select` applies (then the list is the window itself), or their difference.
   */
  private publish(offset: string | undefined, changes?: WindowChange[]): void {
    if (changes?.length === 0) return
    const list = this.selectedWindow()
    if (!changes || this.window.query.select) changes = changesBetween(this.list, list, this.idField)
    this.list = list
    if (changes.length === 0) return
    for (const watch of this.watches) {
      if (!watch.list) continue
      watch.list = list
      watch.send(offset === undefined ? { id: watch.id, changes } : { id: watch.id, offset, changes })
    }
  }

  /** The window with `$select` applied, the same object for a record that did not change. */
  private selectedWindow(): Doc[] {
    const select = this.window.query.select
    if (!select) return this.window.window()
    return this.window.window().map((row) => {
      let selected = this.selected.get(row)
      if (!selected) this.selected.set(row, (selected = project(row, select, this.idField)))
      return selected
    })
  }
}

/** The changes from `before` to `after`, without a `changed` in place whose record is the same (by value). */
export function changesBetween(before: Doc[], after: Doc[], idField: string): WindowChange[] {
  const changes = diff(before, after, idField)
  if (!changes.some((change) => change.type === 'changed' && change.index === change.oldIndex)) return changes
  const old = new Map(before.map((row) => [row[idField], row]))
  return changes.filter(
    (change) =>
      change.type !== 'changed' ||
      change.index !== change.oldIndex ||
      !sameValue(old.get(change.record[idField]), change.record)
  )
}
