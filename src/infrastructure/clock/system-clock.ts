import type { Clock } from '../../domain/clock.js'

/** The real clock. */
export class SystemClock implements Clock {
  now(): number {
    return Date.now()
  }
}
