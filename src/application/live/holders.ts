import type { LiveView } from './live-view.js'

/**
 * Which views of a service hold a record, by its id: the views a write must reach besides those its record's
 * values file it under (a record that no longer matches must leave them, and its old value is not in the event).
 * Entries are added when a view reads or takes a record, and dropped when a write finds that the view no longer
 * holds it (or the view goes): a write looks up one id, whatever the number of views.
 */
export class Holders {
  private readonly byId = new Map<unknown, Set<LiveView>>()
  private readonly ofView = new Map<LiveView, Set<unknown>>()

  /** The views filed as holding this id. */
  of(id: unknown): ReadonlySet<LiveView> | undefined {
    return this.byId.get(id)
  }

  /** Files the view under each of these ids (after it read the store). */
  add(view: LiveView, ids: Iterable<unknown>): void {
    let own = this.ofView.get(view)
    if (!own) this.ofView.set(view, (own = new Set()))
    for (const id of ids) {
      own.add(id)
      let views = this.byId.get(id)
      if (!views) this.byId.set(id, (views = new Set()))
      views.add(view)
    }
  }

  /** After a write of `id` reached the view: filed under it exactly when it holds it now. */
  update(view: LiveView, id: unknown): void {
    if (view.holds(id)) return this.add(view, [id])
    this.byId.get(id)?.delete(view)
    if (this.byId.get(id)?.size === 0) this.byId.delete(id)
    this.ofView.get(view)?.delete(id)
  }

  /** A view that went away. */
  drop(view: LiveView): void {
    for (const id of this.ofView.get(view) ?? []) {
      const views = this.byId.get(id)!
      views.delete(view)
      if (views.size === 0) this.byId.delete(id)
    }
    this.ofView.delete(view)
  }
}
