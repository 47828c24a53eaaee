import type { AttemptRecord, LoginAttempts } from '../../domain/auth/login-attempts.js'
import { keyId } from './postgres-unique-keys.js'
import { SchemaOwner } from './schema-owner.js'

/** Counters whose window ended are deleted at most this often per process. */
const PURGE_EVERY_MS = 60_000

interface Row {
  count: number
  first_at: string
  last_at: string
}

/**
 * Login-throttling counters in PostgreSQL, shared by every instance: one row per key (a hash of it).
 * Counting is one `INSERT … ON CONFLICT DO UPDATE`, which PostgreSQL applies atomically: concurrent
 * failures on several instances are all counted.
 */
export class PostgresLoginAttempts extends SchemaOwner implements LoginAttempts {
  private purgedAt = -Infinity

  async get(key: string): Promise<AttemptRecord | undefined> {
    const { rows } = await this.run<Row>(
      'read login attempts',
      'SELECT count, first_at, last_at FROM plumage_login_attempts WHERE id = $1',
      [keyId('login', key)]
    )
    return rows[0] && record(rows[0])
  }

  async add(key: string, now: number, windowMs: number): Promise<AttemptRecord> {
    const { rows } = await this.run<Row>(
      'count a failed login',
      `INSERT INTO plumage_login_attempts AS a (id, count, first_at, last_at) VALUES ($1, 1, $2, $2)
       ON CONFLICT (id) DO UPDATE SET
         count = CASE WHEN a.first_at <= $3 THEN 1 ELSE a.count + 1 END,
         first_at = CASE WHEN a.first_at <= $3 THEN $2 ELSE a.first_at END,
         last_at = $2
       RETURNING count, first_at, last_at`,
      [keyId('login', key), now, now - windowMs]
    )
    if (now - this.purgedAt > PURGE_EVERY_MS) {
      this.purgedAt = now
      await this.run('purge login attempts', 'DELETE FROM plumage_login_attempts WHERE last_at <= $1', [now - windowMs])
    }
    return record(rows[0]!)
  }

  async reset(key: string): Promise<void> {
    await this.run('reset login attempts', 'DELETE FROM plumage_login_attempts WHERE id = $1', [keyId('login', key)])
  }

  protected tables(): string[] {
    return [
      `CREATE TABLE IF NOT EXISTS plumage_login_attempts (
         id text PRIMARY KEY, count integer NOT NULL, first_at bigint NOT NULL, last_at bigint NOT NULL)`,
      'CREATE INDEX IF NOT EXISTS plumage_login_attempts_last_at ON plumage_login_attempts (last_at)'
    ]
  }

  protected creating(): string {
    return 'create the login attempts table'
  }
}

/** bigint columns arrive as strings (node-postgres keeps their precision); epoch milliseconds fit a number. */
function record(row: Row): AttemptRecord {
  return { count: row.count, firstAt: Number(row.first_at), lastAt: Number(row.last_at) }
}
