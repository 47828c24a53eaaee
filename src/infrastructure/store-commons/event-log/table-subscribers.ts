/**
 * The listeners of an event log, per table, as the RethinkDB and PostgreSQL logs keep them: a subscription
 * asks the log to follow (`follow`, idempotent), and the last one leaving lets it stop (`idle`).
 */
export class TableSubscribers<E> {
  private readonly byTable = new Map<string, Set<(event: E) => void>>()

  constructor(
    private readonly follow: () => void,
    private readonly idle: () => void
  ) {}

  /** Adds `listener` to `table`'s listeners; the answer removes it. */
  add(table: string, listener: (event: E) => void): () => void {
    let listeners = this.byTable.get(table)
    if (!listeners) this.byTable.set(table, (listeners = new Set()))
    listeners.add(listener)
    this.follow()
    return () => {
      listeners.delete(listener)
      if (listeners.size === 0) this.byTable.delete(table)
      if (this.byTable.size === 0) this.idle()
    }
  }

  /** The listeners of `table`, if it has any. */
  of(table: string): ReadonlySet<(event: E) => void> | undefined {
    return this.byTable.get(table)
  }

  /** Hands `event` to every listener of `table`: one that throws is reported to `failed`, the others still run. */
  hand(table: string, event: E, failed: (error: unknown) => void): void {
    for (const listener of this.byTable.get(table) ?? []) {
      try {
        listener(event)
      } catch (error) {
        failed(error)
      }
    }
  }
}
