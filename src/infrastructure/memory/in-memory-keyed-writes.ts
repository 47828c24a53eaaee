import { keyMismatch, type KeyedWrite, type KeyedWrites } from '../../domain/store/keyed-write.js'

interface StoredWrite {
  fingerprint: string
  /** The store's answer to the write, kept as a copy. */
  answer: unknown
  expiresAt: number
}

/** How often keys past their retention are removed, at most (on the next keyed write after it). */
const SWEEP_EVERY_MS = 60_000

/**
 * The memory store's idempotency keys: in the store's process, beside its records. A keyed write runs
 * synchronously — look the key up, write, keep the answer — so no other call runs in between: the key, the answer
 * and the record (and its event) are one step, and of concurrent repeats the first writes and the others answer
 * what it answered. Nothing of a key is ever in flight, so memory never answers 409.
 */
export class InMemoryKeyedWrites implements KeyedWrites {
  private readonly writes = new Map<string, StoredWrite>()
  private nextSweep = 0

  constructor(
    private readonly copy: <V>(value: V) => V,
    private readonly now: () => number = Date.now
  ) {}

  /** `write`'s answer, run once per key within the retention; a repeat gets a copy of the first answer. */
  once<R>(keyed: KeyedWrite, write: () => R): R {
    const now = this.now()
    if (now >= this.nextSweep) this.sweepAt(now)
    const scoped = keyed.scoped()
    const stored = this.writes.get(scoped)
    if (stored !== undefined && stored.expiresAt > now) {
      if (stored.fingerprint !== keyed.fingerprint) throw keyMismatch()
      keyed.handled = keyed.replayed = true
      return this.copy(stored.answer) as R
    }
    // A write that throws keeps no key: it wrote nothing, and a retry may try again.
    const answer = write()
    this.writes.set(scoped, {
      fingerprint: keyed.fingerprint,
      answer: this.copy(answer),
      expiresAt: now + keyed.retentionMs
    })
    keyed.handled = true
    return answer
  }

  async sweep(): Promise<number> {
    return this.sweepAt(this.now())
  }

  /** How many keys are kept (expired ones included until swept). */
  get size(): number {
    return this.writes.size
  }

  private sweepAt(now: number): number {
    this.nextSweep = now + SWEEP_EVERY_MS
    let removed = 0
    for (const [scoped, stored] of this.writes) {
      if (stored.expiresAt <= now) {
        this.writes.delete(scoped)
        removed++
      }
    }
    return removed
  }
}
