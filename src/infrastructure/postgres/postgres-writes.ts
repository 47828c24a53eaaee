import type { PoolClient, QueryResult } from 'pg'
import type { Data } from '../../domain/service/service.js'
import { GroupCommit } from '../store-commons/event-log/index.js'
import type { PostgresDatabase } from './postgres-database.js'
import { isRetryable, isUnavailable, toStoreError } from './postgres-errors.js'
import { FORGET_TOLD, type Told } from './trigger-settings.js'

/** How many times a write rolled back to break a deadlock runs again before its caller hears the error. */
const RETRIES = 3

/** Where a write's statements run: the pool (alone) or the connection of a batch's transaction. */
export interface Statements {
  query<R>(text: string, values: unknown[], prepare: boolean): Promise<QueryResult<R>>
}

/** What a write's statement made: the rows it returned (RETURNING), and how many it wrote. */
export interface Written {
  rows: { doc: Data }[]
  count: number
}

/** One create, update, patch or remove of a table, its statements made by the caller (values and trace included). */
export interface PostgresWrite {
  /** For the log: `<table>.<method>`. */
  operation: string
  /** The one row it writes (the record's key: a write by id, a create of one record); none: it writes alone. */
  key?: string
  told: Told
  /** More than one statement (a `$search` write locks its candidates, tests them, then writes them). */
  several: boolean
  run(statements: Statements): Promise<Written>
}

type Outcome = { written: Written } | { error: unknown }

/** A row's writes: the first (sent alone), and the group of those that came while it was in flight. */
interface RowWrites {
  lone: Promise<unknown>
  group?: GroupCommit<PostgresWrite, Outcome>
  writes: number
}

/**
 * Group commit of the writes of one row (see GroupCommit): a write that finds none of its row's in
 * flight goes at once, alone, as before (one statement, its own implicit transaction); the writes of
 * that row that arrive meanwhile go out together as one transaction on one connection — BEGIN, each
 * write's statements in arrival order, COMMIT — so they share one commit and its WAL flush. Writers
 * of one row cannot share flushes otherwise: each UPDATE waits for the row's lock, which the previous
 * writer holds until its commit is flushed. Writes of different rows stay apart, in parallel on the
 * pool, where PostgreSQL already flushes concurrent commits together; a batch locks one row, so no
 * two batches can deadlock. Every write's events are logged by the triggers in its transaction, in
 * statement order. Each caller gets its own rows.
 *
 * A batch that fails before its commit is rolled back and its writes run again, one by one, alone:
 * each caller then gets exactly the result or the error it would have had alone (a taken key, a
 * value PostgreSQL refuses, a deadlock with another instance's batch). A COMMIT that broke with the
 * connection may have committed: every caller then hears 503, as a lone write would.
 */
export class PostgresWrites {
  /** The rows with writes in flight or waiting, and how many each has; a row's entry goes with its last write. */
  private readonly rows = new Map<string, RowWrites>()

  constructor(
    private readonly db: PostgresDatabase,
    /** Called after a commit that wrote something (the event log reads and notifies). */
    private readonly committed: () => void,
    /** Most writes in one transaction. */
    private readonly maxBatch = 100
  ) {}

  /**
   * A write of no one row, or the first of its row, goes at once, straight to the pool (a lone write pays for no
   * queue and no extra step); a write that finds its row's in flight makes the row's group, whose first batch goes
   * when that write has ended.
   */
  write(write: PostgresWrite): Promise<Written> {
    const key = write.key
    if (key === undefined) return this.send(write)
    const row = this.rows.get(key)
    if (row === undefined) {
      const sent = this.send(write)
      const entry: RowWrites = { lone: sent, writes: 1 }
      this.rows.set(key, entry)
      const release = () => {
        if (--entry.writes === 0) this.rows.delete(key)
      }
      sent.then(release, release)
      return sent
    }
    return this.ofGroup(key, row, write)
  }

  private async ofGroup(key: string, row: RowWrites, write: PostgresWrite): Promise<Written> {
    row.group ??= new GroupCommit<PostgresWrite, Outcome>({
      run: (calls) => this.run(calls.map((call) => call[0]!)),
      maxItems: this.maxBatch,
      inFlight: row.lone
    })
    row.writes++
    let outcome: Outcome
    try {
      outcome = await row.group.submit([write])
    } finally {
      if (--row.writes === 0) this.rows.delete(key)
    }
    if ('error' in outcome) throw outcome.error
    return outcome.written
  }

  private async run(writes: PostgresWrite[]): Promise<Outcome[]> {
    if (writes.length === 1) return [await this.alone(writes[0]!)]
    let client: PoolClient
    try {
      client = await this.db.checkout(writes[0]!.operation)
    } catch (error) {
      // No connection for the batch: none for each write alone either.
      return writes.map(() => ({ error }))
    }
    const done: Written[] = []
    let committing = false
    let broken: Error | undefined
    /** Set when the batch failed: undefined to run its writes again alone, else the error every caller gets. */
    let failed: { error?: unknown } | undefined
    try {
      await client.query('BEGIN')
      const statements = new ClientStatements(this.db, client)
      let updated = false
      let traced = false
      for (const write of writes) {
        if ((updated && !write.told.updated) || (traced && !write.told.trace)) {
          await client.query(FORGET_TOLD)
          updated = traced = false
        }
        done.push(await write.run(statements))
        updated ||= write.told.updated
        traced ||= write.told.trace !== undefined
      }
      committing = true
      await client.query('COMMIT')
    } catch (error) {
      if (committing && isUnavailable(error)) {
        // The commit may have happened: running the writes again could write them twice.
        broken = error as Error
        failed = { error: toStoreError(error, this.db.logger, writes[0]!.operation) }
      } else {
        // A failed COMMIT has ended the transaction; a failed statement leaves it to roll back.
        if (!committing) await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback))
        failed = {}
      }
    } finally {
      client.release(broken)
    }
    if (failed?.error !== undefined) return writes.map(() => ({ error: failed.error }))
    if (failed) {
      const outcomes: Outcome[] = []
      for (const write of writes) outcomes.push(await this.alone(write))
      return outcomes
    }
    if (done.some((written) => written.count > 0)) this.committed()
    return done.map((written) => ({ written }))
  }

  /** One write in its own transaction, as an outcome (a batch's write run again alone). */
  private alone(write: PostgresWrite): Promise<Outcome> {
    return this.send(write).then(
      (written) => ({ written }),
      (error: unknown) => ({ error })
    )
  }

  /**
   * One write in its own transaction: an implicit one for one statement, else BEGIN … COMMIT. A transaction that
   * PostgreSQL rolled back to break a deadlock (another instance's schema setup, a batch of another instance) runs
   * again, up to RETRIES times after a short random pause: nothing of it was committed, so the caller gets the write
   * once instead of a 500.
   */
  private async send(write: PostgresWrite): Promise<Written> {
    for (let attempt = 1; ; attempt++) {
      try {
        const written = write.several
          ? await this.db.transaction(write.operation, (client) => write.run(new ClientStatements(this.db, client)))
          : await write.run(new PoolStatements(this.db, write.operation))
        return this.tell(written)
      } catch (error) {
        if (attempt > RETRIES || !isRetryable(error)) throw error
        this.db.logger.warn('PostgreSQL rolled a write back to break a deadlock; running it again', { attempt })
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt))
      }
    }
  }

  /** Tells the log after a write that wrote something. */
  private readonly tell = (written: Written): Written => {
    if (written.count > 0) this.committed()
    return written
  }
}

/** Statements through the pool, each in its own implicit transaction. */
class PoolStatements implements Statements {
  constructor(
    private readonly db: PostgresDatabase,
    private readonly operation: string
  ) {}

  query<R>(text: string, values: unknown[], prepare: boolean): Promise<QueryResult<R>> {
    return this.db.query<R>(this.operation, text, values, { prepare })
  }
}

/** Statements on one checked-out connection (a transaction's). */
class ClientStatements implements Statements {
  constructor(
    private readonly db: PostgresDatabase,
    private readonly client: PoolClient
  ) {}

  query<R>(text: string, values: unknown[], prepare: boolean): Promise<QueryResult<R>> {
    return this.db.on<R>(this.client, text, values, prepare)
  }
}
