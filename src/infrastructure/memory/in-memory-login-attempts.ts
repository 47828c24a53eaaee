import { injectable } from 'inversify'
import type { AttemptRecord, LoginAttempts } from '../../domain/auth/login-attempts.js'

/** Most keys kept; when full, the entry whose last attempt is oldest goes (counters are short-lived anyway). */
const MAX_KEYS = 100_000

/** Login-throttling counters of this process (one instance; several share RethinkDbLoginAttempts). */
@injectable()
export class InMemoryLoginAttempts implements LoginAttempts {
  private readonly records = new Map<string, AttemptRecord>()

  async get(key: string): Promise<AttemptRecord | undefined> {
    const record = this.records.get(key)
    return record && { ...record }
  }

  async add(key: string, now: number, windowMs: number): Promise<AttemptRecord> {
    const current = this.records.get(key)
    const next =
      current && current.firstAt + windowMs > now
        ? { count: current.count + 1, firstAt: current.firstAt, lastAt: now }
        : { count: 1, firstAt: now, lastAt: now }
    this.records.delete(key)
    if (this.records.size >= MAX_KEYS) this.records.delete(this.records.keys().next().value!)
    this.records.set(key, next)
    return { ...next }
  }

  async reset(key: string): Promise<void> {
    this.records.delete(key)
  }
}
