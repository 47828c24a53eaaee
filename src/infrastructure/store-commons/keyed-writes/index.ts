import { createHash } from 'node:crypto'
import type { KeyedWrite } from '../../../domain/store/keyed-write.js'
import type { Logger } from '../../../domain/logger.js'

/*
 * What the database stores share to honour idempotency keys (README "Retries and idempotency", ADR 0020): the
 * row id of a key, and the occasional sweep of keys past their retention. Loaded only by the stores that use it.
 */

/** The row id of a keyed write: a SHA-256 of its scoped key (caller, path, method, key), so any key fits any index. */
export function keyRowId(keyed: KeyedWrite): string {
  return createHash('sha256').update(keyed.scoped()).digest('base64url')
}

/** How often a store removes the keys past their retention, at most (on a keyed write, after the last sweep). */
export const SWEEP_EVERY_MS = 60_000

/**
 * Runs `sweep` in the background at most once per `everyMs`, when `due()` is called (by keyed writes): no timer to
 * stop, and a store that never sees a key never sweeps. A failed sweep is logged and tried again next time.
 */
export class OccasionalSweep {
  private next = 0
  private running = false

  constructor(
    private readonly sweep: () => Promise<number>,
    private readonly logger: Logger,
    private readonly everyMs = SWEEP_EVERY_MS
  ) {}

  due(now = Date.now()): void {
    if (this.running || now < this.next) return
    this.next = now + this.everyMs
    this.running = true
    this.sweep()
      .catch((error: unknown) => this.logger.warn('could not remove expired idempotency keys', { error }))
      .finally(() => (this.running = false))
  }
}
