import type { RDatum } from 'rethinkdb-ts'
import type { AttemptRecord, LoginAttempts } from '../../domain/auth/login-attempts.js'
import { ensureTable } from './rethinkdb-tables.js'
import { keyId } from './rethinkdb-unique-keys.js'
import { TableOwner, type TableOwnerOptions } from './table-owner.js'

export interface RethinkDbLoginAttemptsOptions extends TableOwnerOptions {
  /** The table of counters (default `login_attempts`). */
  table?: string
}

interface AttemptRow extends AttemptRecord {
  id: string
}

/** Counters whose window ended this long ago are deleted, at most once a minute per process. */
const PURGE_EVERY_MS = 60_000

/**
 * Login-throttling counters in RethinkDB, shared by every instance: one document per key (a hash of
 * it: keys hold e-mail addresses, which may exceed a primary key's 127 characters). Counting is one
 * `replace` with a function of the old document, which RethinkDB applies atomically, so concurrent
 * failures on several instances are all counted.
 */
export class RethinkDbLoginAttempts extends TableOwner implements LoginAttempts {
  readonly tableName: string
  private purgedAt = -Infinity

  constructor(options: RethinkDbLoginAttemptsOptions) {
    super(options)
    this.tableName = options.table ?? 'login_attempts'
  }

  async get(key: string): Promise<AttemptRecord | undefined> {
    const row = await this.run('read login attempts', () => this.table().get(keyId('login', key)).run())
    return row ? { count: row.count, firstAt: row.firstAt, lastAt: row.lastAt } : undefined
  }

  async add(key: string, now: number, windowMs: number): Promise<AttemptRecord> {
    const r = this.r()
    const id = keyId('login', key)
    const fresh = { id, count: 1, firstAt: now, lastAt: now }
    const result = await this.run('count a failed login', () =>
      this.table()
        .get(id)
        .replace(
          (row: RDatum<AttemptRow | null>) =>
            r.branch(
              row.eq(null).or(row('firstAt').le(now - windowMs)),
              fresh,
              row.merge({ count: row('count').add(1), lastAt: now })
            ),
          { returnChanges: 'always' }
        )
        .run()
    )
    if (now - this.purgedAt > PURGE_EVERY_MS) {
      this.purgedAt = now
      await this.run('purge login attempts', () =>
        this.table()
          .between(r.minval, now - windowMs, { index: 'lastAt' })
          .delete()
          .run()
      )
    }
    const row = (result.changes?.[0] as { new_val?: AttemptRow } | undefined)?.new_val ?? fresh
    return { count: row.count, firstAt: row.firstAt, lastAt: row.lastAt }
  }

  async reset(key: string): Promise<void> {
    await this.run('reset login attempts', () => this.table().get(keyId('login', key)).delete().run())
  }

  /** The counters' table and its `lastAt` index. */
  protected async create(): Promise<void> {
    await ensureTable(
      this.r(),
      {
        db: this.options.db,
        name: this.tableName,
        primaryKey: 'id',
        ...this.placement(),
        indexes: [{ name: 'lastAt', fields: ['lastAt'] }]
      },
      this.logger
    )
    await this.table().indexWait().run()
  }

  protected creating(): string {
    return `create table ${this.tableName}`
  }

  private table() {
    return this.r().db(this.options.db).table<AttemptRow>(this.tableName)
  }
}
