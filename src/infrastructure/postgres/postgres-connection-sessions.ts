import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'
import type { Clock } from '../../domain/clock.js'
import type { ConnectionSession, ConnectionSessions } from '../../domain/realtime/connection-sessions.js'
import type { AuthenticationRequest } from '../../domain/service/service.js'
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
}

interface Row {
  connection_id: string
  authentication: string | null
  authentication_offset: string | null
  disconnected_at: string | null
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
  private readonly key: Buffer
  private purgedAt = -Infinity

  constructor(private readonly options: PostgresConnectionSessionsOptions) {
    super(options.db)
    this.key =
      options.secret === undefined
        ? randomBytes(32)
        : Buffer.from(hkdfSync('sha256', options.secret, '', 'plumage connection sessions', 32))
  }

  async save(session: ConnectionSession): Promise<void> {
    const id = hashOf(session.id)
    await this.run(
      'save a connection session',
      `INSERT INTO plumage_connection_sessions (id, connection_id, authentication, authentication_offset, disconnected_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO UPDATE SET connection_id = $2, authentication = $3, authentication_offset = $4,
         disconnected_at = $5`,
      [
        id,
        session.connectionId,
        session.authentication ? this.seal(session.authentication, id) : null,
        session.authenticationOffset ?? null,
        session.disconnectedAt ?? null
      ]
    )
    if (this.options.clock.now() - this.purgedAt >= PURGE_EVERY_MS) void this.purge()
  }

  async load(sessionId: string): Promise<ConnectionSession | undefined> {
    const id = hashOf(sessionId)
    const { rows } = await this.run<Row>(
      'load a connection session',
      'SELECT connection_id, authentication, authentication_offset, disconnected_at FROM plumage_connection_sessions WHERE id = $1',
      [id]
    )
    const row = rows[0]
    if (!row) return undefined
    const disconnectedAt = row.disconnected_at === null ? undefined : Number(row.disconnected_at)
    if (disconnectedAt !== undefined && disconnectedAt + this.options.windowMs < this.options.clock.now())
      return undefined
    const session: ConnectionSession = { id: sessionId, connectionId: row.connection_id }
    if (row.authentication !== null) {
      const authentication = this.open(row.authentication, id)
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
      hashOf(sessionId)
    ])
  }

  protected tables(): string[] {
    return [
      `CREATE TABLE IF NOT EXISTS plumage_connection_sessions (
         id text PRIMARY KEY, connection_id text NOT NULL, authentication text, authentication_offset text,
         disconnected_at bigint)`,
      'CREATE INDEX IF NOT EXISTS plumage_connection_sessions_lost ON plumage_connection_sessions (disconnected_at)'
    ]
  }

  protected creating(): string {
    return 'create the connection sessions table'
  }

  private async purge(): Promise<void> {
    this.purgedAt = this.options.clock.now()
    await this.run('purge connection sessions', 'DELETE FROM plumage_connection_sessions WHERE disconnected_at < $1', [
      this.purgedAt - this.options.windowMs
    ]).catch(() => undefined)
  }

  private seal(authentication: AuthenticationRequest, id: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    // The row's id is authenticated too: a sealed login cannot be moved to another session's row.
    cipher.setAAD(Buffer.from(id))
    const sealed = Buffer.concat([cipher.update(JSON.stringify(authentication), 'utf8'), cipher.final()])
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')
  }

  private open(value: string, id: string): AuthenticationRequest | undefined {
    try {
      const bytes = Buffer.from(value, 'base64url')
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12))
      decipher.setAAD(Buffer.from(id))
      decipher.setAuthTag(bytes.subarray(12, 28))
      const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')
      return JSON.parse(plain) as AuthenticationRequest
    } catch {
      return undefined
    }
  }
}

function hashOf(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('base64url')
}
