import type { Clock } from '../domain/clock.js'

/** A clock a case moves by hand, to see something expire without waiting. */
export class SteppedClock implements Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.current
  }

  advance(milliseconds: number): void {
    this.current += milliseconds
  }
}
