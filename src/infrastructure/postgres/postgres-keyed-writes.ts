import type { Data } from '../../domain/service/service.js'
import {
  keyInFlight,
  keyMismatch,
  type KeyedWrite,
  type KeyedWrites,
  type StoredAnswer
} from '../../domain/store/keyed-write.js'
import { keyRowId, OccasionalSweep } from '../store-commons/keyed-writes/index.js'
import type { PostgresDatabase } from './postgres-database.js'
import { sqlState } from './postgres-errors.js'
import type { PostgresWrite, Statements, Written } from './postgres-writes.js'
import { Parameters } from './sql-compiler.js'
import { settings, type Told } from './trigger-settings.js'

/** What a keyed create writes: its table, the log's name for it, what it tells the triggers, and its records. */
export interface KeyedCreate {
  table: string
  operation: string
  told: Told
  keys: string[]
  texts: string[]
  records: Data[]
}

/** The keys of the database: one table for every store of it (a key's row id names its caller, path and method). */
export const KEYS_TABLE = 'plumage_idempotency'

/** Made by every store's setup (`IF NOT EXISTS`): the keys, their request's digest, the answer and the expiry. */
export const KEYS_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS ${KEYS_TABLE} (id text COLLATE "C" PRIMARY KEY, fingerprint text NOT NULL, answer jsonb, expires_at timestamptz NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS ${KEYS_TABLE}_expires_at ON ${KEYS_TABLE} (expires_at)`
]

/**
 * Inserts the key unless a live one holds it (a key past its retention is taken over): the row exists when the
 * statement returns, one per key whatever the concurrency — a second writer of the key waits for the first's
 * transaction, then finds its row (ON CONFLICT) and claims nothing.
 */
function claimSql(params: Parameters, id: string, keyed: KeyedWrite, answer: string | null): string {
  return (
    `INSERT INTO ${KEYS_TABLE} AS k (id, fingerprint, answer, expires_at) VALUES (${params.add(id, 'text')}, ` +
    `${params.add(keyed.fingerprint, 'text')}, ${params.add(answer, 'jsonb')}, ` +
    `now() + ${params.add(keyed.retentionMs, 'float8')} * interval '1 millisecond') ` +
    'ON CONFLICT (id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, answer = EXCLUDED.answer, ' +
    'expires_at = EXCLUDED.expires_at WHERE k.expires_at <= now() RETURNING 1'
  )
}

/**
 * Idempotency keys on PostgreSQL, written in the transaction of the write they key (and so of its event, which the
 * triggers log in it too): the key, its answer and the write commit together or not at all.
 *
 * - A keyed create is ONE statement: a CTE claims the key with the answer (the records, known before the insert)
 *   and the INSERT takes its rows only when the claim returned one. Alone it is its own implicit transaction, as an
 *   unkeyed create; in a group-commit batch it is one more statement of the batch's transaction.
 * - A keyed update, patch or remove runs in a transaction: claim, write, then the answer (the rows RETURNING gave).
 *   `lock_timeout` bounds how long it waits for a first request of its key still in flight elsewhere (409).
 * - A write that claimed nothing writes nothing; the key's row is read (a new statement: it sees the first
 *   writer's commit) and its answer returned, or 422 for another request's fingerprint.
 */
export class PostgresKeyedWrites implements KeyedWrites {
  private readonly sweeper: OccasionalSweep

  constructor(private readonly db: PostgresDatabase) {
    this.sweeper = new OccasionalSweep(() => this.sweep(), db.logger)
  }

  async sweep(): Promise<number> {
    const { rowCount } = await this.db.query(
      `${KEYS_TABLE}.sweep`,
      `DELETE FROM ${KEYS_TABLE} WHERE expires_at <= now()`
    )
    return rowCount ?? 0
  }

  async answer(keyed: KeyedWrite): Promise<StoredAnswer | undefined> {
    const { rows } = await this.db.query<{ fingerprint: string; answer: Data[] | null }>(
      `${KEYS_TABLE}.answer`,
      `SELECT fingerprint, answer FROM ${KEYS_TABLE} WHERE id = $1::text AND expires_at > now()`,
      [keyRowId(keyed)],
      { prepare: true }
    )
    if (rows.length === 0) return undefined
    if (rows[0]!.fingerprint !== keyed.fingerprint) throw keyMismatch()
    // Claimed, not committed with its answer yet: only a transaction still running sees that (none here).
    const answer = rows[0]!.answer
    return answer === null ? undefined : { result: answer }
  }

  /**
   * A keyed create of `records` (their keys and JSON texts) into `table`: one statement, the claim of the key (with
   * the records as its answer) in a CTE the INSERT joins, so that the records go in only when the key was claimed.
   */
  create(create: KeyedCreate, keyed: KeyedWrite): PostgresWrite {
    this.sweeper.due()
    const id = keyRowId(keyed)
    const params = new Parameters()
    const { table, operation, told, keys, texts } = create
    const { cte, from } = settings(params, told)
    const claim = `claim AS (${claimSql(params, id, keyed, JSON.stringify(create.records))})`
    const text =
      `${cte ? `${cte.trimEnd()}, ` : 'WITH '}${claim} INSERT INTO ${table} (key, doc) SELECT row.key, row.doc ` +
      `FROM unnest(${params.add(keys, 'text[]')}, ${params.add(texts, 'jsonb[]')}) AS row(key, doc), claim${from ? `, ${from}` : ''}`
    const run = async (statements: Statements): Promise<Written> => {
      keyed.handled = true
      const { rowCount } = await statements.query(text, params.values, true)
      if ((rowCount ?? 0) > 0) return { rows: [], count: rowCount ?? 0 }
      return this.replay(statements, keyed, id)
    }
    return { operation, key: keys.length === 1 ? keys[0] : undefined, told, several: false, run }
  }

  /** A keyed update, patch or remove: `write` between the claim and the answer, in one transaction (no key: as is). */
  keyed(write: PostgresWrite, keyed: KeyedWrite | undefined): PostgresWrite {
    if (keyed === undefined) return write
    this.sweeper.due()
    const id = keyRowId(keyed)
    const run = async (statements: Statements): Promise<Written> => {
      keyed.handled = true
      try {
        await statements.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(keyed.waitMs))}`, [], false)
        const params = new Parameters()
        const claim = claimSql(params, id, keyed, null)
        const claimed = await statements.query(claim, params.values, true)
        if (claimed.rowCount === 0) return await this.replay(statements, keyed, id)
        const written = await write.run(statements)
        const answer = JSON.stringify(written.rows.map((row) => row.doc))
        await statements.query(`UPDATE ${KEYS_TABLE} SET answer = $2::jsonb WHERE id = $1::text`, [id, answer], true)
        return written
      } catch (error) {
        // 55P03 lock_not_available: the first request of this key is still in its transaction after waitMs.
        if (sqlState(error) === '55P03') throw keyInFlight()
        throw error
      }
    }
    return { ...write, several: true, run }
  }

  /** The stored answer of a key this write did not claim, as written rows of nothing written. */
  private async replay(statements: Statements, keyed: KeyedWrite, id: string): Promise<Written> {
    const { rows } = await statements.query<{ fingerprint: string; answer: Data[] | null }>(
      `SELECT fingerprint, answer FROM ${KEYS_TABLE} WHERE id = $1::text`,
      [id],
      true
    )
    const stored = rows[0]
    // Gone between the claim and this read: expired and swept in that instant. The client may retry.
    if (stored === undefined || stored.answer === null) throw keyInFlight()
    if (stored.fingerprint !== keyed.fingerprint) throw keyMismatch()
    keyed.replayed = true
    return { rows: stored.answer.map((doc) => ({ doc })), count: 0 }
  }
}
