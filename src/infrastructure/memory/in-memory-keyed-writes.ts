import type { Params } from '../../domain/service/service.js'
import {
  keyedWriteOf,
  keyMismatch,
  type KeyedWrite,
  type KeyedWrites,
  type StoredAnswer
} from '../../domain/store/keyed-write.js'

interface StoredWrite {
  fingerprint: string
  /**
   * The store's answer to the write, kept in the same synchronous step as the write: a copy made when it settled
   * (the caller's hooks may change the records they were handed), and a repeat gets a copy of that.
   */
  answer: Promise<unknown>
  expiresAt: number
}

/** How often keys past their retention are removed, at most (on the next keyed write after it). */
const SWEEP_EVERY_MS = 60_000

/**
 * The memory store's idempotency keys, given to it by the idempotency module (the core loads none of this): in the
 * store's process, beside its records. The memory store writes synchronously (its methods are async functions
 * without an await), so looking the key up, writing and keeping the key are one step with no other call in
 * between: the key, the answer and the record (and its event) go together, and of concurrent repeats the first
 * writes and the others get its answer. Nothing of a key is ever in flight elsewhere, so memory never answers 409.
 */
export class InMemoryKeyedWrites implements KeyedWrites {
  private readonly writes = new Map<string, StoredWrite>()
  private nextSweep = 0

  constructor(
    private readonly copy: <V>(value: V) => V,
    private readonly now: () => number = Date.now
  ) {}

  /** `write`'s answer, written once per key within the retention; a repeat gets a copy of the first answer. */
  once<R>(params: Params, write: () => Promise<R>): Promise<R> {
    const keyed = keyedWriteOf(params, this)
    if (keyed === undefined) return write()
    const now = this.now()
    if (now >= this.nextSweep) this.sweepAt(now)
    const scoped = keyed.scoped()
    const stored = this.writes.get(scoped)
    if (stored !== undefined && stored.expiresAt > now) {
      if (stored.fingerprint !== keyed.fingerprint) return Promise.reject(keyMismatch())
      keyed.handled = keyed.replayed = true
      return stored.answer.then((answer) => this.copy(answer) as R)
    }
    const answer = write()
    const entry: StoredWrite = {
      fingerprint: keyed.fingerprint,
      answer: answer.then((result) => this.copy(result)),
      expiresAt: now + keyed.retentionMs
    }
    this.writes.set(scoped, entry)
    keyed.handled = true
    // A write that failed keeps no key: it wrote nothing, and a retry may try again.
    entry.answer.catch(() => this.writes.get(scoped) === entry && this.writes.delete(scoped))
    return answer
  }

  async answer(keyed: KeyedWrite): Promise<StoredAnswer | undefined> {
    const stored = this.writes.get(keyed.scoped())
    if (stored === undefined || stored.expiresAt <= this.now()) return undefined
    if (stored.fingerprint !== keyed.fingerprint) throw keyMismatch()
    return { result: this.copy(await stored.answer) }
  }

  async sweep(): Promise<number> {
    return this.sweepAt(this.now())
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
