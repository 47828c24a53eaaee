import type { LoginResult } from '../../domain/auth/authentication-result.js'
import type { ConnectionSession, ConnectionSessions } from '../../domain/realtime/connection-sessions.js'
import type { EventHistory, RecordedEvent } from '../../domain/realtime/event-history.js'
import type { AuthenticationRequest, Connection } from '../../domain/service/service.js'
import type { Delivery } from '../channel.js'
import type { CloseReason, ConnectionExtension, GatewayAccess, Restorable } from '../transport/connection-extension.js'

/** What recovery needs: the history and sessions it keeps, and what its gateway lends it. */
export interface RecoveryAccess extends GatewayAccess {
  readonly history: EventHistory
  readonly sessions: ConnectionSessions
}

/**
 * Connection state recovery for one transport's connections: it keeps each connection's session
 * (its ids, its login, and where its login changed) where any instance can read it, and restores a
 * connection that comes back with its session id and the offset of the last event it received:
 * the same login if it still holds, its channels computed again by the app's own rules, every event
 * they would have delivered since the offset in order, then live ones, none twice.
 */
export class ConnectionRecovery implements ConnectionExtension {
  /** The session of each connection, as last saved. */
  private readonly tracked = new Map<Connection, ConnectionSession>()
  /**
   * Saves of a connection's session, in the order they were asked for, while one has not settled: an entry only
   * then, rather than a record per connection for its whole life.
   */
  private readonly saving = new Map<Connection, Promise<void>>()
  /** Connections being restored, with the live deliveries held for them meanwhile. */
  private readonly restoring = new Map<Connection, Delivery[]>()

  constructor(private readonly access: RecoveryAccess) {
    access.events.on('login', this.onLogin)
    access.events.on('logout', this.onLogout)
  }

  /**
   * Keeps a new connection's session. Call it before the client learns its session id: a client
   * that reconnects at once must find it.
   */
  async remember(connection: Connection, ids: { id: string; connectionId: string }): Promise<void> {
    const authentication = loginOf(connection)
    const session = sessionOf(ids, authentication, authentication && this.access.history.head())
    this.tracked.set(connection, session)
    await this.save(connection, session)
  }

  /**
   * The session `id` if the client may resume it from `offset`: it exists and has not expired, its
   * login still holds (a session revoked or expired meanwhile is not restored) and the history
   * still has every event after the offset.
   */
  async restorable(id: string, offset: string, provider: string): Promise<Restorable | undefined> {
    const session = await this.access.sessions.load(id)
    if (!session) return undefined
    const missed = await this.access.history.since(offset)
    if (missed === 'unknown') return undefined
    if (!session.authentication) return { session, offset, missed }
    try {
      return { session, login: await this.access.verify(session.authentication, provider), offset, missed }
    } catch {
      return undefined
    }
  }

  /**
   * Restores a connection: opens it, logs it in again, and delivers what it missed through the
   * transport, then the live deliveries held meanwhile that the replay did not already cover.
   * Rejects when the history lost events meanwhile: the transport must then drop the connection.
   */
  async restore(connection: Connection, { session, login, offset, missed }: Restorable): Promise<void> {
    this.restoring.set(connection, [])
    try {
      const restored = sessionOf(session, session.authentication, session.authenticationOffset)
      this.tracked.set(connection, restored)
      const saved = this.save(connection, restored)
      this.access.open(connection)
      if (login) this.access.events.emit('login', login, { provider: connection.provider, connection })
      // Events recorded since `missed` was read, now that the channels are the connection's own.
      const later = await this.access.history.since(missed.at(-1)?.offset ?? offset)
      // Pruned in the meantime: the connection cannot have everything, and must not believe it does.
      if (later === 'unknown') throw new Error('The event history dropped events the restored connection missed')
      await saved
      const events = skipThrough([...missed, ...later], session.authenticationOffset)
      const replayed = new Set(events.map((event) => event.offset))
      for (const delivery of await this.access.missedBy(connection, events)) this.access.deliver(delivery)
      const through = events.at(-1)?.offset
      if (through !== undefined) this.access.seen(connection, through)
      // Held deliveries the replay covered are dropped (as are copies held once per transport listener).
      for (const delivery of this.restoring.get(connection)!) {
        if (delivery.offset !== undefined && replayed.has(delivery.offset)) continue
        if (delivery.offset !== undefined) replayed.add(delivery.offset)
        this.access.deliver(delivery)
      }
    } finally {
      this.restoring.delete(connection)
    }
  }

  head(): string {
    return this.access.history.head()
  }

  get restoringAny(): boolean {
    return this.restoring.size > 0
  }

  /** A live delivery to a connection being restored waits for the replay; answers whether it was held. */
  hold(connection: Connection, delivery: Delivery): boolean {
    const held = this.restoring.get(connection)
    if (!held) return false
    held.push({ ...delivery, connections: [connection] })
    return true
  }

  /** A connection went away: a lost one's session waits for the window, a closed one's is removed. */
  async forget(connection: Connection, reason: CloseReason): Promise<void> {
    const session = this.tracked.get(connection)
    if (!session) return
    this.tracked.delete(connection)
    if (reason === 'replaced') return
    const disconnectedAt = this.access.clock.now()
    await after(this.saving.get(connection), () =>
      reason === 'lost'
        ? this.access.sessions.save({ ...session, disconnectedAt })
        : this.access.sessions.remove(session.id)
    )
  }

  detach(): void {
    this.access.events.off('login', this.onLogin)
    this.access.events.off('logout', this.onLogout)
    this.tracked.clear()
  }

  private save(connection: Connection, session: ConnectionSession): Promise<void> {
    this.tracked.set(connection, session)
    const saving = after(this.saving.get(connection), () => this.access.sessions.save(session))
    this.saving.set(connection, saving)
    const settled = () => {
      if (this.saving.get(connection) === saving) this.saving.delete(connection)
    }
    saving.then(settled, settled)
    return saving
  }

  /**
   * A login or logout changes what a recovery restores. Events before it were published for the
   * previous login: the head is recorded, and a recovery replays nothing before it with the new one.
   */
  private changed(connection: Connection | undefined, authentication: AuthenticationRequest | undefined): void {
    // A restore logs in with the session's own login: nothing changes.
    if (!connection || !this.tracked.has(connection) || this.restoring.has(connection)) return
    const session = this.tracked.get(connection)!
    const head = this.access.history.head()
    this.access.seen(connection, head)
    void this.save(connection, sessionOf(session, authentication, head)).catch(() => undefined)
  }

  private readonly onLogin = (result: LoginResult | undefined, meta?: { connection?: Connection }): void => {
    if (typeof result?.accessToken !== 'string') return
    const connection = meta?.connection
    // Connection authentication, listening first, has bound this login to the connection: its object is shared.
    const login = connection && loginOf(connection)
    this.changed(
      connection,
      login?.accessToken === result.accessToken ? login : { strategy: 'jwt', accessToken: result.accessToken }
    )
  }

  private readonly onLogout = (_result: unknown, meta?: { connection?: Connection }): void => {
    this.changed(meta?.connection, undefined)
  }
}

/**
 * Runs `work` once `previous` settles, whether it saved or failed (a failed save is its caller's to report); with
 * nothing before it, in a later microtask all the same.
 */
function after(previous: Promise<void> | undefined, work: () => Promise<void>): Promise<void> {
  return (previous ?? Promise.resolve()).catch(() => undefined).then(work)
}

/**
 * The connection's login, as its session keeps it: the connection's own object (connection authentication sets it
 * as `{ strategy: 'jwt', accessToken }` at each login and never changes it in place), not a copy per session.
 */
function loginOf(connection: Connection): AuthenticationRequest | undefined {
  const login = connection.authentication
  return login?.strategy === 'jwt' && typeof login.accessToken === 'string' ? login : undefined
}

/**
 * A connected session with these ids, login and offset of the login, built as one object literal of each shape: a
 * session made by spreading one with properties left out, or by deleting one, got a hidden class of its own in V8
 * (~200 bytes per connection).
 */
function sessionOf(
  { id, connectionId }: { id: string; connectionId: string },
  authentication: AuthenticationRequest | undefined,
  authenticationOffset: string | undefined
): ConnectionSession {
  if (authentication === undefined)
    return authenticationOffset === undefined ? { id, connectionId } : { id, connectionId, authenticationOffset }
  return authenticationOffset === undefined
    ? { id, connectionId, authentication }
    : { id, connectionId, authentication, authenticationOffset }
}

/** The events after `offset` when it is among them (the offset of a login inside the range); all of them otherwise. */
function skipThrough(events: RecordedEvent[], offset: string | undefined): RecordedEvent[] {
  const at = offset === undefined ? -1 : events.findIndex((event) => event.offset === offset)
  return at < 0 ? events : events.slice(at + 1)
}
