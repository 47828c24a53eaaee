import { injectable } from 'inversify'
import type { UniqueKeys } from '../../domain/unique-keys.js'

/**
 * Unique keys for the embedded store: a set per scope. A claim checks and adds in one synchronous
 * step, so concurrent calls in this process can never both win. One process only: with several
 * processes, use a store that all of them share (RethinkDbUniqueKeys).
 */
@injectable()
export class InMemoryUniqueKeys implements UniqueKeys {
  private readonly scopes = new Map<string, Set<string>>()

  async claim(scope: string, key: string): Promise<boolean> {
    let keys = this.scopes.get(scope)
    if (!keys) this.scopes.set(scope, (keys = new Set()))
    if (keys.has(key)) return false
    keys.add(key)
    return true
  }

  async release(scope: string, key: string): Promise<void> {
    this.scopes.get(scope)?.delete(key)
  }
}
