import type { Id } from './service/service.js'

/**
 * The uniqueness port: a set of claimed keys per scope (e.g. scope `users.email`, key
 * `ann@example.com`). `claim` is atomic — of any number of concurrent claims of one key, exactly one
 * succeeds — which a query-then-insert in a service can never be. A claimed key also remembers the
 * id of the record that holds it, so the normalised value finds the record by its primary key.
 */
export interface UniqueKeys {
  /**
   * Claims `key` in `scope`: true when it was free (and is now taken), false when it was already taken. With
   * `holder`, the claim records it at once (a back-fill knows the record; a write learns its id later, `assign`).
   */
  claim(scope: string, key: string, holder?: Id): Promise<boolean>
  /** Frees `key` in `scope` (nothing happens when it was not claimed). */
  release(scope: string, key: string): Promise<void>
  /** Records the id of the record holding a claimed key (nothing happens when it is not claimed). */
  assign(scope: string, key: string, holder: Id): Promise<void>
  /**
   * The id of the record holding `key`; undefined when it is free or was claimed without one (before holders were
   * recorded).
   */
  holder(scope: string, key: string): Promise<Id | undefined>
  close?(): Promise<void>
}
export const UniqueKeys = Symbol.for('UniqueKeys')
