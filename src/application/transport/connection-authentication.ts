import type { EventEmitter } from 'node:events'
import type { LoginResult } from '../../domain/auth/authentication-result.js'
import type { Clock } from '../../domain/clock.js'
import { NotAuthenticated } from '../../domain/errors/errors.js'
import type { Connection, Data } from '../../domain/service/service.js'
import { parseAuthorization } from './authorization-header.js'
import { DeadlineQueue } from './deadline-queue.js'

/** What connection authentication needs of the app: its events and the authentication service. */
export interface AuthenticationAccess {
  /** The app: emits and receives the `login` and `logout` events. */
  readonly events: EventEmitter
  /** Whether an authentication service is registered. */
  available(): boolean
  /** Calls the authentication service as this connection (create: log in; remove: log out). */
  call(connection: Connection, method: 'create' | 'remove', data: unknown): Promise<unknown>
  /** The authentication service's sessions, when it keeps server-side sessions that can be revoked. */
  revocations(): RevocationCheck | undefined
}
/** The authentication service's sessions when it keeps server-side sessions that can be revoked (duck-typed). */
export function revocationsOf(service: unknown): RevocationCheck | undefined {
  const sessions = (service as { sessions?: Partial<RevocationCheck> } | undefined)?.sessions
  return typeof sessions?.check === 'function' && typeof sessions.refresh === 'function'
    ? (sessions as RevocationCheck)
    : undefined
}

/**
 * What connection authentication needs of the authentication service's sessions (see ../authentication/sessions.ts).
 */
export interface RevocationCheck {
  /** Brings the deny-list up to date when it is older than its sync interval; undefined while it is fresh. */
  refresh(): Promise<void> | undefined
  /** Grows whenever the deny-list gains a revocation: while it stays the same, no logged-in token can have been. */
  readonly revision: number
  /** Throws NotAuthenticated when the token with these claims was revoked (its session, `sid`, or itself, `jti`). */
  check(claims: RevocationClaims): Promise<void> | undefined
}

/** The claims of a token that a revocation names. */
export interface RevocationClaims {
  sid?: string
  jti?: string
}

/** How often logged-in connections are checked against revocations made anywhere (logout, password change). */
const REVOCATION_SWEEP_MS = 500

/**
 * What is kept of a connection's login, one record per logged-in connection: when its token expires, and the
 * claims a revocation would name (with sessions that can be revoked), not the whole login result or payload.
 */
interface Login extends RevocationClaims {
  expiresAt?: number
}

interface AuthEventMeta {
  connection?: Connection
}

/**
 * Binds authentication to the connections of one real-time transport: the v5 way (the
 * authentication service's `login` and `logout` app events carry the connection), the handshake
 * `Authorization` header, and the older `authenticate`/`logout` events (docs/wire-protocol.md,
 * Authentication on a socket). A token that expires, or a session revoked anywhere, logs the
 * connection out, so it stops receiving private events.
 */
export class ConnectionAuthentication {
  private readonly logins = new Map<Connection, Login>()
  private readonly expiries: DeadlineQueue<Connection>
  /** Logins watched for revocations, with the deny-list's revision they were last checked at. */
  private watched = 0
  private checkedRevision = -1
  private sweeper?: ReturnType<typeof setInterval>
  private sweeping = false

  constructor(
    private readonly access: AuthenticationAccess,
    private readonly owns: (connection: Connection) => boolean,
    // The same clock the token service checks `exp` against, so both agree when a token has expired.
    clock: Clock
  ) {
    this.expiries = new DeadlineQueue(clock, (connection) => this.loggedOut(connection))
    access.events.on('login', this.onLogin)
    access.events.on('logout', this.onLogout)
  }

  /** Authenticates during the handshake when the client sent an `Authorization` header. */
  async handshake(connection: Connection): Promise<void> {
    // The same header rules as REST (docs/wire-protocol.md, Authorization header).
    const authentication = parseAuthorization(connection.headers?.authorization as string | undefined)
    if (!authentication || !this.access.available()) return
    await this.access.call(connection, 'create', authentication)
  }

  /** The v3 `authenticate` event: the same as `create` on the authentication service. */
  authenticate(connection: Connection, payload: unknown): Promise<unknown> {
    const data = typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? payload : {}
    return this.access.call(connection, 'create', data)
  }

  /** The v3 `logout` event: like `remove` on the authentication service, but `{}` when not logged in. */
  async logout(connection: Connection): Promise<unknown> {
    if (!connection.authentication) return {}
    return this.access.call(connection, 'remove', null)
  }

  /** Stops watching the login (expiry, revocations) of a connection that went away or logged out. */
  forget(connection: Connection): void {
    const login = this.logins.get(connection)
    if (login === undefined) return
    this.logins.delete(connection)
    if (login.expiresAt !== undefined) this.expiries.delete(connection, login.expiresAt)
    if (login.sid === undefined && login.jti === undefined) return
    if (--this.watched === 0 && this.sweeper) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }

  detach(): void {
    this.access.events.off('login', this.onLogin)
    this.access.events.off('logout', this.onLogout)
    for (const connection of [...this.logins.keys()]) this.forget(connection)
    this.expiries.clear()
  }

  private readonly onLogin = (result: LoginResult | undefined, meta?: AuthEventMeta): void => {
    const connection = meta?.connection
    if (!connection || !this.owns(connection) || typeof result?.accessToken !== 'string') return
    connection.authentication = { strategy: 'jwt', accessToken: result.accessToken }
    if (result.user) connection.user = result.user as Data
    this.forget(connection)
    const payload = result.authentication?.payload
    const login: Login = {}
    if (typeof payload?.exp === 'number') login.expiresAt = payload.exp * 1000
    if (payload && this.access.revocations()) {
      if (typeof payload.sid === 'string') login.sid = payload.sid
      if (typeof payload.jti === 'string') login.jti = payload.jti
    }
    if (login.expiresAt === undefined && login.sid === undefined && login.jti === undefined) return
    this.logins.set(connection, login)
    if (login.expiresAt !== undefined) this.expiries.add(connection, login.expiresAt)
    if (login.sid !== undefined || login.jti !== undefined) this.watchRevocation()
  }

  private readonly onLogout = (_result: unknown, meta?: AuthEventMeta): void => {
    const connection = meta?.connection
    if (!connection || !this.owns(connection)) return
    this.forget(connection)
    delete connection.authentication
    delete connection.user
  }

  /**
   * The app-level logout event for a login that ended here (expired, revoked): every listener (channels, this class)
   * forgets it. Its result says which token ended, as the authentication service's `remove` would.
   */
  private loggedOut(connection: Connection): void {
    const accessToken = connection.authentication?.accessToken
    const result = { accessToken, authentication: { strategy: 'jwt', accessToken } }
    this.access.events.emit('logout', result, { provider: connection.provider, connection })
  }

  /**
   * A session revoked on any instance (logout elsewhere, password change, deleted user) logs its
   * sockets here out within a second: every REVOCATION_SWEEP_MS the deny-list is brought up to date
   * from the store (at most every 500 ms), and when it gained a revocation since the last sweep, the
   * logged-in connections are checked against it. A sweep with nothing new revoked costs no pass
   * over the connections: with 10,000 sockets that pass was twice a second of work for nothing.
   */
  private watchRevocation(): void {
    this.watched++
    // A login made since the last sweep was checked when it was verified; a later revocation raises the revision.
    if (this.sweeper) return
    this.sweeper = setInterval(() => void this.sweep(), REVOCATION_SWEEP_MS)
    this.sweeper.unref?.()
  }

  private async sweep(): Promise<void> {
    const sessions = this.access.revocations()
    if (this.sweeping || !sessions) return
    this.sweeping = true
    try {
      await sessions.refresh()
      const revision = sessions.revision
      if (revision === this.checkedRevision) return
      let complete = true
      for (const [connection, login] of [...this.logins]) {
        if (login.sid === undefined && login.jti === undefined) continue
        try {
          await sessions.check(login)
        } catch (error) {
          // Only a revocation logs out; a store that cannot be read right now is asked again next round, as the
          // revision is then not taken as checked.
          if (!(error instanceof NotAuthenticated)) complete = false
          else if (this.logins.get(connection) === login) {
            this.forget(connection)
            this.loggedOut(connection)
          }
        }
      }
      if (complete) this.checkedRevision = revision
    } catch {
      // The store could not be read: the next sweep tries again (the revision is not taken as checked).
    } finally {
      this.sweeping = false
    }
  }
}
