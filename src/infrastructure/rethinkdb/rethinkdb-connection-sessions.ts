import type { Clock } from '../../domain/clock.js'
import {
  lostWithHolder,
  silentAfterMs,
  type ConnectionSession,
  type ConnectionSessions
} from '../../domain/realtime/connection-sessions.js'
import { Heartbeat, SealedLogins } from '../store-commons/event-log/index.js'
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
  /** The instance that has the connection (its heartbeat row's id). */
  holder?: string
}

/** An instance's heartbeat, in the same table: `holder:<instance id>`, never the id of a session row (a hash). */
interface HolderRow {
  id: string
  beatAt: number
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
  private readonly heartbeat: Heartbeat
  private purgedAt = -Infinity

  constructor(protected override readonly options: RethinkDbConnectionSessionsOptions) {
    super(options)
    this.tableName = options.table ?? 'plumage_connection_sessions'
    this.logins = new SealedLogins(options.secret)
    this.heartbeat = new Heartbeat((id) => this.beat(id), options.windowMs, this.logger)
  }

  async save(session: ConnectionSession): Promise<void> {
    const id = this.logins.rowId(session.id)
    const row: Row = {
      id,
      connectionId: session.connectionId,
      ...(session.authentication ? { authentication: this.logins.seal(session.authentication, id) } : {}),
      ...(session.authenticationOffset !== undefined ? { authenticationOffset: session.authenticationOffset } : {}),
      ...(session.disconnectedAt !== undefined ? { disconnectedAt: session.disconnectedAt } : {}),
      holder: holderId(this.heartbeat.id)
    }
    await this.heartbeat.started()
    await this.run('save a connection session', () => this.table().insert(row, { conflict: 'replace' }).run())
    if (this.options.clock.now() - this.purgedAt >= PURGE_EVERY_MS) void this.purge()
  }

  async load(sessionId: string): Promise<ConnectionSession | undefined> {
    const id = this.logins.rowId(sessionId)
    const row = (await this.run('load a connection session', () => this.table().get(id).run())) as Row | null
    if (!row) return undefined
    const disconnectedAt = row.disconnectedAt ?? (await this.lostWithHolder(row.holder))
    if (disconnectedAt !== undefined && disconnectedAt + this.options.windowMs < this.options.clock.now())
      return undefined
    const session: ConnectionSession = { id: sessionId, connectionId: row.connectionId }
    if (row.authentication !== undefined) {
      const authentication = this.logins.open(row.authentication, id)
      // Sealed with another key (another AUTH_SECRET): the login cannot be restored, so neither can the session.
      if (!authentication) return undefined
      session.authentication = authentication
    }
    if (row.authenticationOffset !== undefined) session.authenticationOffset = row.authenticationOffset
    if (disconnectedAt !== undefined) session.disconnectedAt = disconnectedAt
    return session
  }

  async close(): Promise<void> {
    this.heartbeat.stop()
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
        indexes: [
          { name: 'disconnectedAt', fields: ['disconnectedAt'] },
          { name: 'holder', fields: ['holder'] },
          { name: 'beatAt', fields: ['beatAt'] }
        ]
      },
      this.logger
    )
    await this.table().indexWait().run()
  }

  protected creating(): string {
    return 'create the connection sessions table'
  }

  /**
   * When a session another instance holds as connected was lost: that instance's last heartbeat once it went silent
   * (undefined while it beats, and for a session this instance holds or one saved before sessions had holders).
   */
  private async lostWithHolder(holder: string | undefined): Promise<number | undefined> {
    if (holder === undefined || holder === holderId(this.heartbeat.id)) return undefined
    const beat = (await this.run('load a connection session', () =>
      this.table().get(holder).run()
    )) as unknown as HolderRow | null
    return lostWithHolder(beat?.beatAt, this.options.clock.now(), this.options.windowMs)
  }

  private async beat(id: string): Promise<void> {
    const row: HolderRow = { id: holderId(id), beatAt: this.options.clock.now() }
    await this.run('save a heartbeat', () =>
      this.table()
        .insert(row as unknown as Row, { conflict: 'replace', durability: 'soft' })
        .run()
    )
  }

  /**
   * Deletes expired sessions: lost ones past the window, and those held as connected by an instance silent for
   * longer than the window (its heartbeat goes with them).
   */
  private async purge(): Promise<void> {
    this.purgedAt = this.options.clock.now()
    const { windowMs } = this.options
    const r = this.r()
    try {
      await this.table()
        .between(r.minval, this.purgedAt - windowMs, { index: 'disconnectedAt' })
        .delete({ durability: 'soft' })
        .run()
      const own = holderId(this.heartbeat.id)
      const silent = (
        (await this.table()
          .between(r.minval, this.purgedAt - windowMs - silentAfterMs(windowMs), { index: 'beatAt' })
          .getField('id')
          .run()) as unknown as string[]
      ).filter((holder) => holder !== own) // never this instance's own, whatever its clock says
      if (silent.length === 0) return
      await this.table()
        .getAll(r.args(silent), { index: 'holder' })
        .filter((row) => row.hasFields('disconnectedAt').not())
        .delete({ durability: 'soft' })
        .run()
      await this.table().getAll(r.args(silent)).delete({ durability: 'soft' }).run()
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

function holderId(instance: string): string {
  return `holder:${instance}`
}
