/**
 * The callers waiting for an event log to hand out a place (its `whenAt`), as the RethinkDB and
 * PostgreSQL logs keep them: answered true once the log's position reaches the place, false after
 * their timeout or when the log stops following.
 */
export class PositionWaiters<P> {
  private readonly waiters = new Set<{ place: P; resolve(reached: boolean): void }>()

  /** `compare`: negative when `a` comes before `b` in the log's order, 0 for the same place. */
  constructor(private readonly compare: (a: P, b: P) => number) {}

  /** Resolves true once the log's position (now `position`) reaches `place`, false when not within `timeoutMs`. */
  whenAt(position: P | undefined, place: P, timeoutMs: number): Promise<boolean> {
    if (position !== undefined && this.compare(position, place) >= 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      const waiter = {
        place,
        resolve: (reached: boolean) => {
          clearTimeout(timer)
          this.waiters.delete(waiter)
          resolve(reached)
        }
      }
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs)
      timer.unref?.()
      this.waiters.add(waiter)
    })
  }

  /** The log has handed out everything up to `position`. */
  reached(position: P): void {
    for (const waiter of [...this.waiters]) if (this.compare(waiter.place, position) <= 0) waiter.resolve(true)
  }

  /** The log stopped following: every waiter is answered false. */
  cancel(): void {
    for (const waiter of [...this.waiters]) waiter.resolve(false)
  }
}
