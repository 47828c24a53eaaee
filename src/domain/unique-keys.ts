/**
 * The uniqueness port: a set of claimed keys per scope (e.g. scope `users.email`, key
 * `ann@example.com`). `claim` is atomic — of any number of concurrent claims of one key, exactly one
 * succeeds — which a query-then-insert in a service can never be.
 */
export interface UniqueKeys {
  /** Claims `key` in `scope`: true when it was free (and is now taken), false when it was already taken. */
  claim(scope: string, key: string): Promise<boolean>
  /** Frees `key` in `scope` (nothing happens when it was not claimed). */
  release(scope: string, key: string): Promise<void>
  close?(): Promise<void>
}
export const UniqueKeys = Symbol.for('UniqueKeys')
