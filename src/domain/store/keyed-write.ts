import { Conflict, FeathersError, Unprocessable } from '../errors/errors.js'
import type { Params } from '../service/service.js'

/**
 * A write sent with an idempotency key (README "Retries and idempotency", ADR 0020), as the store that honours keys
 * receives it in `params.idempotency`. Such a store writes the key and the write's answer atomically with the write
 * and its event (one transaction, one query, one synchronous step in memory): a repeat within the retention answers
 * the stored answer without writing, a repeat with another request is refused (422), and of concurrent repeats
 * exactly one writes.
 */
export interface KeyedWrite {
  /**
   * The key in its scope — the caller, the service path, the method and the client's key — read when the store
   * writes, after the authentication hooks ran (the caller is known only then).
   */
  scoped(): string
  /** A digest of the request as received (id, data, query): the same key with another request is a 422. */
  readonly fingerprint: string
  /** How long the key and its answer are kept, in ms. */
  readonly retentionMs: number
  /** How long a repeat waits for the first request of its key still in flight before it is refused (409), in ms. */
  readonly waitMs: number
  /**
   * The keys of the store the call's service writes to: only that store honours this key, not another store a
   * hook writes to with the call's params copied. Absent: any store honours it.
   */
  readonly target?: KeyedWrites
  /** Set by the store: it honoured the key (wrote with it, or answered a repeat). */
  handled?: boolean
  /** Set by the store: the answer is a stored one, nothing was written (no event either). */
  replayed?: boolean
}

/**
 * What a store that honours keys declares (`Store.keyedWrites`): it reads `params.idempotency` on create, update,
 * patch and remove, and removes keys past their retention.
 */
export interface KeyedWrites {
  /** Removes the keys past their retention; resolves with how many it removed. */
  sweep(): Promise<number>
  /**
   * The write's own answer stored with this key — in the write's transaction (or query, or synchronous step), so it
   * exists exactly when the write committed: the records as the store returned them. Undefined for a key not written
   * (or past its retention); another request's key is a 422. There is no later, separate answer to lose in a crash:
   * the caller's answer is re-derived from this one (ADR 0020).
   */
  answer(keyed: KeyedWrite): Promise<StoredAnswer | undefined>
}

/** A keyed write's stored answer: what the store's write returned (a record, a list of records, or null). */
export interface StoredAnswer {
  result: unknown
}

/** The keyed write of a store call for the store with `keys`, if any. */
export function keyedWriteOf(params: Params | undefined, keys: KeyedWrites): KeyedWrite | undefined {
  const keyed = params?.idempotency as KeyedWrite | undefined
  if (keyed === undefined || typeof keyed.scoped !== 'function') return undefined
  return keyed.target === undefined || keyed.target === keys ? keyed : undefined
}

/** The same key sent with another request (draft-ietf-httpapi-idempotency-key-header: 422). */
export function keyMismatch(): FeathersError {
  return new Unprocessable('This Idempotency-Key was already used with a different request')
}

/** A repeat of a key whose first request is still being processed (the draft's 409). */
export function keyInFlight(): FeathersError {
  return new Conflict('A request with this Idempotency-Key is still being processed; retry later')
}
