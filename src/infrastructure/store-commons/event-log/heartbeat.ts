import { randomUUID } from 'node:crypto'
import { heartbeatMs } from '../../../domain/realtime/connection-sessions.js'
import type { Logger } from '../../../domain/logger.js'

/**
 * This instance's heartbeat for the connection sessions it holds (see `heartbeatMs` in the domain): `beat` writes
 * "`id` is alive now" where every instance reads it. The first beat is written before the first session this
 * instance holds is saved (`started`), then one every `heartbeatMs(windowMs)` on a timer that never keeps the
 * process alive; a failed beat is logged and the next one tries again.
 */
export class Heartbeat {
  /** The instance's id: new for every process, so a restarted instance is a new holder. */
  readonly id = randomUUID()
  private first?: Promise<void>
  private timer?: NodeJS.Timeout
  private stopped = false

  constructor(
    private readonly beat: (id: string) => Promise<void>,
    private readonly windowMs: number,
    private readonly logger: Logger
  ) {}

  /** Resolves once the first beat is written (written by the first call; again after it failed). */
  started(): Promise<void> {
    return (this.first ??= this.beat(this.id).then(
      () => this.schedule(),
      (error: unknown) => {
        this.first = undefined
        throw error
      }
    ))
  }

  stop(): void {
    this.stopped = true
    clearInterval(this.timer)
  }

  private schedule(): void {
    if (this.stopped || this.timer) return
    this.timer = setInterval(() => {
      this.beat(this.id).catch((error: unknown) =>
        this.logger.debug('connection sessions: a heartbeat failed; the next one tries again', { error: String(error) })
      )
    }, heartbeatMs(this.windowMs))
    this.timer.unref()
  }
}
