import type { Clock } from '../../domain/clock.js'
import { silentLogger, type Logger } from '../../domain/logger.js'
import {
  lostWithHolder,
  silentAfterMs,
  type ConnectionSession,
  type ConnectionSessions
} from '../../domain/realtime/connection-sessions.js'
import { Heartbeat, SealedLogins } from '../store-commons/event-log/index.js'
import type { PostgresDatabase } from './postgres-database.js'
import { SchemaOwner } from './schema-owner.js'

export interface PostgresConnectionSessionsOptions {
  db: PostgresDatabase
  clock: Clock
  /** How long a lost connection's session is kept (the recovery window), in ms. */
  windowMs: number
  /**
   * What the key that encrypts stored logins is derived from (AUTH_SECRET). Every instance must be
   * given the same one to restore each other's sessions; without one, a key is drawn per process.
   */
  secret?: string
  logger?: Logger
}

interface Row {
  connection_id: string
  authentication: string | null
  authentication_offset: string | null
  disconnected_at: string | null
  /** The instance that has the connection, and its last heartbeat (null once purged). */
  holder: string | null
  beat_at: string | null
}

/** Expired sessions are deleted at most this often (by whichever save comes first). */
const PURGE_EVERY_MS = 60_000

/**
 * Connection sessions in a table beside the event log, so that a client resumes on any instance,
 * also when the one it was connected to died. As on RethinkDB: rows are keyed by a SHA-256 of the
 * private session id and hold the login sealed with AES-256-GCM under a key derived from
 * AUTH_SECRET (the row id as associated data); a lost session expires `windowMs` after it was lost.
 */
export class PostgresConnectionSessions extends SchemaOwner implements ConnectionSessions {
  private readonly logins: SealedLogins
  private readonly heartbeat: Heartbeat
  private purgedAt = -Infinity

  constructor(private readonly options: PostgresConnectionSessionsOptions) {
    super(options.db)
    this.logins = new SealedLogins(options.secret)
    this.heartbeat = new Heartbeat((id) => this.beat(id), options.windowMs, options.logger ?? silentLogger)
  }

  async save(session: ConnectionSession): Promise<void> {
    const id = this.logins.rowId(session.id)
    await this.heartbeat.started()
    await this.run(
      'save a connection session',
      `INSERT INTO plumage_connection_sessions
         (id, connection_id, authentication, authentication_offset, disconnected_at, holder)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET connection_id = $2, authentication = $3, authentication_offset = $4,
         disconnected_at = $5, holder = $6`,
      [
        id,
        session.connectionId,
        session.authentication ? this.logins.seal(session.authentication, id) : null,
        session.authenticationOffset ?? null,
        session.disconnectedAt ?? null,
        this.heartbeat.id
      ]
    )
    if (this.options.clock.now() - this.purgedAt >= PURGE_EVERY_MS) void this.purge()
  }

  async load(sessionId: string): Promise<ConnectionSession | undefined> {
    const id = this.logins.rowId(sessionId)
    const { rows } = await this.run<Row>(
      'load a connection session',
      `SELECT s.connection_id, s.authentication, s.authentication_offset, s.disconnected_at, s.holder, h.beat_at
       FROM plumage_connection_sessions s LEFT JOIN plumage_connection_holders h ON h.id = s.holder WHERE s.id = $1`,
      [id]
    )
    const row = rows[0]
    if (!row) return undefined
    const disconnectedAt = row.disconnected_at !== null ? Number(row.disconnected_at) : this.lostWithHolder(row)
    if (disconnectedAt !== undefined && disconnectedAt + this.options.windowMs < this.options.clock.now())
      return undefined
    const session: ConnectionSession = { id: sessionId, connectionId: row.connection_id }
    if (row.authentication !== null) {
      const authentication = this.logins.open(row.authentication, id)
      // Sealed with another key (another AUTH_SECRET): the login cannot be restored, so neither can the session.
      if (!authentication) return undefined
      session.authentication = authentication
    }
    if (row.authentication_offset !== null) session.authenticationOffset = row.authentication_offset
    if (disconnectedAt !== undefined) session.disconnectedAt = disconnectedAt
    return session
  }

  async remove(sessionId: string): Promise<void> {
    await this.run('remove a connection session', 'DELETE FROM plumage_connection_sessions WHERE id = $1', [
      this.logins.rowId(sessionId)
    ])
  }

  /**
   * When a session another instance holds as connected was lost: that instance's last heartbeat once it went silent
   * (undefined while it beats, and for a session this instance holds or one saved before sessions had holders).
   */
  private lostWithHolder({ holder, beat_at }: Row): number | undefined {
    if (holder === null || holder === this.heartbeat.id) return undefined
    const lastBeat = beat_at === null ? undefined : Number(beat_at)
    return lostWithHolder(lastBeat, this.options.clock.now(), this.options.windowMs)
  }

  async close(): Promise<void> {
    this.heartbeat.stop()
  }

  protected tables(): string[] {
    return [
      `CREATE TABLE IF NOT EXISTS plumage_connection_sessions (
         id text PRIMARY KEY, connection_id text NOT NULL, authentication text, authentication_offset text,
         disconnected_at bigint, holder text)`,
      // Tables made before sessions had holders get the column.
      'ALTER TABLE plumage_connection_sessions ADD COLUMN IF NOT EXISTS holder text',
      'CREATE INDEX IF NOT EXISTS plumage_connection_sessions_lost ON plumage_connection_sessions (disconnected_at)',
      'CREATE INDEX IF NOT EXISTS plumage_connection_sessions_holder ON plumage_connection_sessions (holder)',
      'CREATE TABLE IF NOT EXISTS plumage_connection_holders (id text PRIMARY KEY, beat_at bigint NOT NULL)'
    ]
  }

  private async beat(id: string): Promise<void> {
    await this.run(
      'save a heartbeat',
      `INSERT INTO plumage_connection_holders (id, beat_at) VALUES ($1, $2)
       ON CONFLICT (id) DO UPDATE SET beat_at = $2`,
      [id, this.options.clock.now()]
    )
  }

  protected creating(): string {
    return 'create the connection sessions table'
  }

  /**
   * Deletes expired sessions: lost ones past the window, and those held as connected by an instance silent for
   * longer than the window (its heartbeat goes with them).
   */
  private async purge(): Promise<void> {
    this.purgedAt = this.options.clock.now()
    const { windowMs } = this.options
    await this.run('purge connection sessions', 'DELETE FROM plumage_connection_sessions WHERE disconnected_at < $1', [
      this.purgedAt - windowMs
    ]).catch(() => undefined)
    await this.run(
      'purge connection sessions',
      // Never this instance's own, whatever its clock says.
      `WITH silent AS (DELETE FROM plumage_connection_holders WHERE beat_at < $1 AND id <> $2 RETURNING id)
       DELETE FROM plumage_connection_sessions WHERE disconnected_at IS NULL AND holder IN (SELECT id FROM silent)`,
      [this.purgedAt - windowMs - silentAfterMs(windowMs), this.heartbeat.id]
    ).catch(() => undefined)
  }
}
