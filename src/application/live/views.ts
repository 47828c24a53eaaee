import type { Filter } from '../../domain/query/ast.js'
import { QueryIndex } from '../../domain/query/query-index.js'
import { Holders } from './holders.js'
import type { LiveView } from './live-view.js'

/** A service's views: filed by their equality anchors, and by the records they hold. */
export interface Filed {
  idField: string
  index: QueryIndex<LiveView>
  views: Set<LiveView>
  holders: Holders
  /**
   * The views reading the store (a first read, a refill): every write of the service reaches them. A record the read
   * brings is not among their holders yet, and a write that makes it leave the query files it under no anchor of
   * theirs: without this, a read that began before such a write would keep the record (the RethinkDB live oracle
   * found lists holding a record patched out of their query while their view read).
   */
  reading: Set<LiveView>
}

/**
 * The live views by key, filed per service for the feed (README "Live queries", ADR 0019). A view whose last watch
 * left is kept `keepMs` (unless it is reading): a watch that comes back meanwhile — a reconnect's resume, on this
 * instance — finds it current, applied every write since, and reads nothing.
 */
export class Views {
  private readonly byKey = new Map<string, LiveView>()
  readonly paths = new Map<string, Filed>()
  /** Views whose last watch left, each until its timer drops it. */
  private readonly idle = new Map<LiveView, ReturnType<typeof setTimeout>>()

  constructor(private readonly keepMs: number) {}

  get(key: string): LiveView | undefined {
    return this.byKey.get(key)
  }

  /** Whether this view is the one filed under its key. */
  filed(view: LiveView): boolean {
    return this.byKey.get(view.key) === view
  }

  /** Files a new view under its key and for the feed of its service (by the equality anchors of `filter`). */
  add(view: LiveView, filter: Filter, idField: string): void {
    this.byKey.set(view.key, view)
    let filed = this.paths.get(view.path)
    if (!filed)
      this.paths.set(
        view.path,
        (filed = { idField, index: new QueryIndex(), views: new Set(), holders: new Holders(), reading: new Set() })
      )
    filed.index.add(view, filter)
    filed.views.add(view)
    if (view.busy) filed.reading.add(view)
  }

  /** A filed view began or ended a read of the store. */
  reading(view: LiveView, busy: boolean): void {
    const filed = this.filed(view) ? this.paths.get(view.path) : undefined
    if (busy) filed?.reading.add(view)
    else filed?.reading.delete(view)
  }

  /** A watch joined the view: it is no longer idle. */
  wake(view: LiveView): void {
    clearTimeout(this.idle.get(view))
    this.idle.delete(view)
  }

  /** The view's last watch may have left: it is kept a while, then dropped. */
  left(view: LiveView): void {
    if (view.watches.size > 0 || !this.filed(view)) return
    if (this.keepMs > 0 && !view.busy) this.idle.set(view, setTimeout(() => this.drop(view), this.keepMs).unref())
    else this.drop(view)
  }

  /** Forgets a view no watch holds. */
  drop(view: LiveView): void {
    this.idle.delete(view)
    if (view.watches.size > 0 || !this.filed(view)) return
    this.byKey.delete(view.key)
    const filed = this.paths.get(view.path)!
    filed.index.delete(view)
    filed.views.delete(view)
    filed.holders.drop(view)
    filed.reading.delete(view)
    if (filed.views.size === 0) this.paths.delete(view.path)
  }

  /** How many views have watches, how many are kept idle, the watches, and the records all views hold (/metrics). */
  get size(): { views: number; idle: number; watches: number; records: number } {
    let watches = 0
    let records = 0
    for (const view of this.byKey.values()) {
      watches += view.watches.size
      records += view.window.size
    }
    return { views: this.byKey.size - this.idle.size, idle: this.idle.size, watches, records }
  }

  clear(): void {
    for (const timer of this.idle.values()) clearTimeout(timer)
    this.idle.clear()
  }
}
