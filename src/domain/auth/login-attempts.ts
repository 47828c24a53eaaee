/** Failed logins counted under one key (an account or a client address) in the current window. */
export interface AttemptRecord {
  count: number
  /** Epoch milliseconds of the first failure of the window. */
  firstAt: number
  /** Epoch milliseconds of the latest failure. */
  lastAt: number
}

/**
 * The login-throttling counters. Every process of one app must share them (a database), so that
 * the limit holds across instances. Keys are opaque strings; adapters may hash them.
 */
export interface LoginAttempts {
  get(key: string): Promise<AttemptRecord | undefined>
  /**
   * Counts one failure atomically and answers the record after it: a new window starts when the
   * last one began more than `windowMs` before `now`.
   */
  add(key: string, now: number, windowMs: number): Promise<AttemptRecord>
  /** Forgets the key (a correct login). */
  reset(key: string): Promise<void>
  close?(): Promise<void>
}
export const LoginAttempts = Symbol.for('LoginAttempts')
