import type { EventEmitter } from 'node:events'
import type { LoginResult } from '../../domain/auth/authentication-result.js'
import type { Clock } from '../../domain/clock.js'
import { NotAuthenticated } from '../../domain/errors/errors.js'
import type { Connection, Data } from '../../domain/service/service.js'
import { parseAuthorization } from './authorization-header.js'

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
/** setTimeout fires at once for delays above 2^31-1 ms, so long-lived tokens are re-checked in steps. */
const MAX_TIMER_DELAY = 2 ** 31 - 1

/**
 * What connection authentication needs of the authentication service's sessions (see ../authentication/sessions.ts).
 */
export interface RevocationCheck {
  check(payload: Record<string, unknown>): Promise<void> | undefined
}

/** How often logged-in connections are checked against revocations made anywhere (logout, password change). */
const REVOCATION_SWEEP_MS = 500

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
  private readonly timers = new Map<Connection, ReturnType<typeof setTimeout>>()
  /** Token payloads of logged-in connections, for the revocation sweep. */
  private readonly payloads = new Map<Connection, { result: LoginResult; payload: Record<string, unknown> }>()
  private sweeper?: ReturnType<typeof setInterval>
  private sweeping = false

  constructor(
    private readonly access: AuthenticationAccess,
    private readonly owns: (connection: Connection) => boolean,
    // The same clock the token service checks `exp` against, so both agree when a token has expired.
    private readonly clock: Clock
  ) {
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

  /** Stops the expiry timer (and revocation checks) of a connection that went away. */
  forget(connection: Connection): void {
    clearTimeout(this.timers.get(connection))
    this.timers.delete(connection)
    this.payloads.delete(connection)
    if (this.payloads.size === 0 && this.sweeper) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }

  detach(): void {
    this.access.events.off('login', this.onLogin)
    this.access.events.off('logout', this.onLogout)
    for (const connection of new Set([...this.timers.keys(), ...this.payloads.keys()])) this.forget(connection)
  }

  private readonly onLogin = (result: LoginResult | undefined, meta?: AuthEventMeta): void => {
    const connection = meta?.connection
    if (!connection || !this.owns(connection) || typeof result?.accessToken !== 'string') return
    connection.authentication = { strategy: 'jwt', accessToken: result.accessToken }
    if (result.user) connection.user = result.user as Data
    const exp = result.authentication?.payload?.exp
    this.forget(connection)
    if (typeof exp === 'number') this.expireAt(connection, result, exp * 1000)
    const payload = result.authentication?.payload
    if (payload && this.access.revocations()) this.watchRevocation(connection, result, payload)
  }

  private readonly onLogout = (_result: unknown, meta?: AuthEventMeta): void => {
    const connection = meta?.connection
    if (!connection || !this.owns(connection)) return
    this.forget(connection)
    delete connection.authentication
    delete connection.user
  }

  /**
   * A session revoked on any instance (logout elsewhere, password change, deleted user) logs its
   * sockets here out within a second: every REVOCATION_SWEEP_MS the logged-in connections are checked
   * against the sessions' deny-list, which is brought up to date from the store at most every 500 ms.
   */
  private watchRevocation(connection: Connection, result: LoginResult, payload: Record<string, unknown>): void {
    this.payloads.set(connection, { result, payload })
    if (this.sweeper) return
    this.sweeper = setInterval(() => void this.sweep(), REVOCATION_SWEEP_MS)
    this.sweeper.unref?.()
  }

  private async sweep(): Promise<void> {
    const sessions = this.access.revocations()
    if (this.sweeping || !sessions) return
    this.sweeping = true
    try {
      for (const [connection, { result, payload }] of [...this.payloads]) {
        try {
          await sessions.check(payload)
        } catch (error) {
          // Only a revocation logs out; a store that cannot be read right now is asked again next round.
          if (!(error instanceof NotAuthenticated) || this.payloads.get(connection)?.payload !== payload) continue
          this.forget(connection)
          this.access.events.emit('logout', result, { provider: connection.provider, connection })
        }
      }
    } finally {
      this.sweeping = false
    }
  }

  private expireAt(connection: Connection, result: LoginResult, at: number): void {
    const delay = at - this.clock.now()
    const timer = setTimeout(
      () => {
        if (delay > MAX_TIMER_DELAY) return this.expireAt(connection, result, at)
        this.timers.delete(connection)
        // The app-level logout event makes every listener (channels, this class) forget the login.
        this.access.events.emit('logout', result, { provider: connection.provider, connection })
      },
      Math.max(0, Math.min(delay, MAX_TIMER_DELAY))
    )
    timer.unref?.()
    this.timers.set(connection, timer)
  }
}
