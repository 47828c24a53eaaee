import type { Clock } from '../../src/domain/clock.js'

/** A clock tests move by hand, e.g. to see a token expire without waiting. */
export class FakeClock implements Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.current
  }

  advance(milliseconds: number): this {
    this.current += milliseconds
    return this
  }
}
