import { injectable } from 'inversify'
import type { Id } from '../../domain/service/service.js'
import type { UniqueKeys } from '../../domain/unique-keys.js'

/**
 * Unique keys for the embedded store: a map per scope from key to its holder's id. A claim checks
 * and adds in one synchronous step, so concurrent calls in this process can never both win. One
 * process only: with several processes, use a store that all of them share (RethinkDbUniqueKeys).
 */
@injectable()
export class InMemoryUniqueKeys implements UniqueKeys {
  private readonly scopes = new Map<string, Map<string, Id | undefined>>()

  async claim(scope: string, key: string, holder?: Id): Promise<boolean> {
    let keys = this.scopes.get(scope)
    if (!keys) this.scopes.set(scope, (keys = new Map()))
    if (keys.has(key)) return false
    keys.set(key, holder)
    return true
  }

  async release(scope: string, key: string): Promise<void> {
    this.scopes.get(scope)?.delete(key)
  }

  async assign(scope: string, key: string, holder: Id): Promise<void> {
    const keys = this.scopes.get(scope)
    if (keys?.has(key)) keys.set(key, holder)
  }

  async holder(scope: string, key: string): Promise<Id | undefined> {
    return this.scopes.get(scope)?.get(key)
  }
}
