import type { Clock } from '../../domain/clock.js'

/** setTimeout fires at once for delays above 2^31-1 ms, so far deadlines are reached in steps. */
const MAX_TIMER_DELAY = 2 ** 31 - 1

/**
 * Items due at a time (by the Clock), with one timer for all of them: the earliest deadline's. A timer per item
 * (a `Timeout` with its closure, ~280 bytes) was the largest thing each logged-in socket kept; here an item costs
 * its entry in the set of its deadline, which it shares with every item due at the same time (tokens' `exp` are
 * whole seconds). Deadlines are kept sorted, one entry each; the timer does not keep the process alive.
 */
export class DeadlineQueue<T> {
  private readonly due = new Map<number, Set<T>>()
  /** The deadlines of `due`, earliest first. */
  private readonly deadlines: number[] = []
  private timer?: ReturnType<typeof setTimeout>

  constructor(
    private readonly clock: Clock,
    /** Called once for each item whose deadline has come. */
    private readonly fire: (item: T) => void
  ) {}

  add(item: T, at: number): void {
    const items = this.due.get(at)
    if (items) {
      items.add(item)
      return
    }
    this.due.set(at, new Set([item]))
    const index = this.indexOf(at)
    this.deadlines.splice(index, 0, at)
    if (index === 0) this.schedule()
  }

  /** Takes an item out (`at`: the deadline it was added with); nothing when it is not there. */
  delete(item: T, at: number): void {
    const items = this.due.get(at)
    if (!items?.delete(item) || items.size > 0) return
    this.due.delete(at)
    const index = this.indexOf(at)
    this.deadlines.splice(index, 1)
    if (index === 0) this.schedule()
  }

  /** Forgets every item and stops the timer. */
  clear(): void {
    this.due.clear()
    this.deadlines.length = 0
    this.schedule()
  }

  /** Where `at` is, or would go, in the sorted deadlines. */
  private indexOf(at: number): number {
    let low = 0
    let high = this.deadlines.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.deadlines[middle]! < at) low = middle + 1
      else high = middle
    }
    return low
  }

  private schedule(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    const next = this.deadlines[0]
    if (next === undefined) return
    this.timer = setTimeout(() => this.run(), Math.max(0, Math.min(next - this.clock.now(), MAX_TIMER_DELAY)))
    this.timer.unref?.()
  }

  private run(): void {
    const now = this.clock.now()
    while (this.deadlines.length > 0 && this.deadlines[0]! <= now) {
      const at = this.deadlines.shift()!
      const items = this.due.get(at)!
      this.due.delete(at)
      for (const item of items) this.fire(item)
    }
    this.schedule()
  }
}
