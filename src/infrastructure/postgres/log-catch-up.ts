/** One caller of `caughtUp`: reads numbered after `mark` started after it asked. */
interface Waiter {
  mark: number
  /** The xmax of the first read that started after the call: every write committed before the call is below it. */
  target?: bigint
  resolve(caughtUp: boolean): void
}

/**
 * Read your writes on the PostgreSQL log (ADR 0020): callers waiting until the follower has handed out every event
 * of the writes committed before they asked. A write committed before a read's snapshot was taken has a
 * transaction id below that snapshot's xmax; a read whose snapshot's xmin is at or above that xmax, and that read
 * every row below its xmin (fewer rows than its batch), has handed all of them out. So: the xmax of the first read
 * that started after the call, then the first complete read whose xmin reaches it — one read when no other
 * transaction was running, a few while older ones were.
 */
export class LogCatchUp {
  private issued = 0
  private readonly waiters = new Set<Waiter>()

  /** A read statement is about to be sent: its number. */
  issue(): number {
    return ++this.issued
  }

  /** Read `seq` finished: its snapshot's xmin and xmax, and whether it handed out every row below its xmin. */
  done(seq: number, xmin: bigint, xmax: bigint, complete: boolean): void {
    for (const waiter of [...this.waiters]) {
      if (seq <= waiter.mark) continue
      waiter.target ??= xmax
      if (complete && xmin >= waiter.target) waiter.resolve(true)
    }
  }

  /** Resolves true once caught up (see the class), false after `timeoutMs`; `read` makes the follower read now. */
  wait(timeoutMs: number, read: () => void): Promise<boolean> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        mark: this.issued,
        resolve: (caughtUp) => {
          clearTimeout(timer)
          this.waiters.delete(waiter)
          resolve(caughtUp)
        }
      }
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs)
      timer.unref?.()
      this.waiters.add(waiter)
      read()
    })
  }

  /** The follower stopped: every waiter is answered false. */
  cancel(): void {
    for (const waiter of [...this.waiters]) waiter.resolve(false)
  }
}
