import type { Clock } from '../../domain/clock.js'
import type { ConnectionSession, ConnectionSessions } from '../../domain/realtime/connection-sessions.js'
import { SealedLogins } from '../realtime/sealed-logins.js'
import { ensureTable } from './rethinkdb-tables.js'
import { TableOwner, type TableOwnerOptions } from './table-owner.js'

export interface RethinkDbConnectionSessionsOptions extends TableOwnerOptions {
  clock: Clock
  /** How long a lost connection's session is kept (the recovery window), in ms. */
  windowMs: number
  /**
   * What the key that encrypts stored logins is derived from (AUTH_SECRET). Every instance must be
   * given the same one to restore each other's sessions; without one, a key is drawn per process.
   */
  secret?: string
  /** The table (default `plumage_connection_sessions`). */
  table?: string
}

interface Row {
  /** SHA-256 of the private session id: reading the table is not enough to resume someone's session. */
  id: string
  connectionId: string
  /** The login, AES-256-GCM encrypted (iv, tag, ciphertext; base64url): an access token is never stored in clear. */
  authentication?: string
  authenticationOffset?: string
  disconnectedAt?: number
}

/** Expired sessions are deleted at most this often (by whichever save comes first). */
const PURGE_EVERY_MS = 60_000

/**
 * Connection sessions in a table beside the event log, so that a client resumes on any instance of
 * the app, also when the one it was connected to died. Rows are keyed by a hash of the private
 * session id and hold the login encrypted with a key derived from AUTH_SECRET. A lost session expires
 * `windowMs` after `disconnectedAt` (checked on load; expired rows are purged through an index).
 */
export class RethinkDbConnectionSessions extends TableOwner implements ConnectionSessions {
  readonly tableName: string
  private readonly logins: SealedLogins
  private purgedAt = -Infinity

  constructor(protected override readonly options: RethinkDbConnectionSessionsOptions) {
    super(options)
    this.tableName = options.table ?? 'plumage_connection_sessions'
    this.logins = new SealedLogins(options.secret)
  }

  async save(session: ConnectionSession): Promise<void> {
    const id = this.logins.rowId(session.id)
    const row: Row = {
      id,
      connectionId: session.connectionId,
      ...(session.authentication ? { authentication: this.logins.seal(session.authentication, id) } : {}),
      ...(session.authenticationOffset !== undefined ? { authenticationOffset: session.authenticationOffset } : {}),
      ...(session.disconnectedAt !== undefined ? { disconnectedAt: session.disconnectedAt } : {})
    }
    await this.run('save a connection session', () => this.table().insert(row, { conflict: 'replace' }).run())
    if (this.options.clock.now() - this.purgedAt >= PURGE_EVERY_MS) void this.purge()
  }

  async load(sessionId: string): Promise<ConnectionSession | undefined> {
    const id = this.logins.rowId(sessionId)
    const row = (await this.run('load a connection session', () => this.table().get(id).run())) as Row | null
    if (!row) return undefined
    if (row.disconnectedAt !== undefined && row.disconnectedAt + this.options.windowMs < this.options.clock.now())
      return undefined
    const session: ConnectionSession = { id: sessionId, connectionId: row.connectionId }
    if (row.authentication !== undefined) {
      const authentication = this.logins.open(row.authentication, id)
      // Sealed with another key (another AUTH_SECRET): the login cannot be restored, so neither can the session.
      if (!authentication) return undefined
      session.authentication = authentication
    }
    if (row.authenticationOffset !== undefined) session.authenticationOffset = row.authenticationOffset
    if (row.disconnectedAt !== undefined) session.disconnectedAt = row.disconnectedAt
    return session
  }

  async remove(sessionId: string): Promise<void> {
    await this.run('remove a connection session', () => this.table().get(this.logins.rowId(sessionId)).delete().run())
  }

  /** The table and its `disconnectedAt` index. */
  protected async create(): Promise<void> {
    await ensureTable(
      this.r(),
      {
        db: this.options.db,
        name: this.tableName,
        primaryKey: 'id',
        ...this.placement(),
        indexes: [{ name: 'disconnectedAt', fields: ['disconnectedAt'] }]
      },
      this.logger
    )
    await this.table().indexWait().run()
  }

  protected creating(): string {
    return 'create the connection sessions table'
  }

  private async purge(): Promise<void> {
    this.purgedAt = this.options.clock.now()
    const r = this.r()
    try {
      await this.table()
        .between(r.minval, this.purgedAt - this.options.windowMs, { index: 'disconnectedAt' })
        .delete({ durability: 'soft' })
        .run()
    } catch (error) {
      this.logger.debug('RethinkDB connection sessions: purging expired ones failed; the next save tries again', {
        error: String(error)
      })
    }
  }

  private table() {
    return this.r().db(this.options.db).table<Row>(this.tableName)
  }
}
