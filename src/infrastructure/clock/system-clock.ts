import { injectable } from 'inversify'
import type { Clock } from '../../domain/clock.js'

/** The real clock. */
@injectable()
export class SystemClock implements Clock {
  now(): number {
    return Date.now()
  }
}
