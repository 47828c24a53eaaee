import { FeathersError, NotAuthenticated } from '../../../domain/errors/errors.js'
import type { LoginResult } from '../../../domain/auth/authentication-result.js'
import type { AuthenticationRequest, Params } from '../../../domain/service/service.js'
import type { ClientApp, ClientHookContext, ServiceMap } from '../client-app.js'
import { MemoryStorage, type TokenStorage } from './storage.js'

export interface AuthenticationClientOptions {
  /** Path of the authentication service. */
  path: string
  storage: TokenStorage
  storageKey: string
  /** REST only: the header and scheme the token travels in. */
  header: string
  scheme: string
  jwtStrategy: string
  /** Where the refresh token is kept in `storage`. */
  refreshStorageKey: string
  refreshStrategy: string
  /** How long (ms) before the access token's `exp` it is refreshed (default 60 s); 0 turns automatic refresh off. */
  refreshBefore: number
  /** Timers and clock of the automatic refresh (tests pass their own). */
  timers: RefreshTimers
}

export interface RefreshTimers {
  now(): number
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

const globalTimers: RefreshTimers = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>)
}

const DEFAULTS: Omit<AuthenticationClientOptions, 'storage'> = {
  path: 'authentication',
  storageKey: 'feathers-jwt',
  header: 'Authorization',
  scheme: 'Bearer',
  jwtStrategy: 'jwt',
  refreshStorageKey: 'plumage-refresh-token',
  refreshStrategy: 'refresh',
  refreshBefore: 60_000,
  timers: globalTimers
}
/** setTimeout fires at once for delays above 2^31-1 ms. */
const MAX_TIMER_DELAY = 2 ** 31 - 1
/** A refresh that failed but not for authentication (a timeout, no connection) is tried again after this long. */
const REFRESH_RETRY_MS = 5_000

declare module '../client-app.js' {
  // An augmentation repeats the class's type parameters.
  interface ClientApp<Services extends ServiceMap<Services> = object> {
    /** Added by `configure(authentication())`. */
    authentication: AuthenticationClient
    authenticate(data?: AuthenticationRequest, params?: Params): Promise<LoginResult>
    reAuthenticate(force?: boolean, strategy?: string): Promise<LoginResult>
    logout(): Promise<LoginResult | null>
  }
}

/**
 * Events on the client app: 'login' and 'authenticated' (every login, refreshes included), 'logout',
 * and 'session-expired' (with the error) when the session could not be refreshed: the tokens are
 * dropped and the connection is anonymous; the user has to log in again.
 */
export const SESSION_EXPIRED = 'session-expired'

/**
 * The authentication client (docs/wire-protocol.md, Clients), for any transport: logs in through the
 * authentication service, keeps the token in storage, waits for a pending login before other calls,
 * sends `Authorization: Bearer <token>` on REST calls (except the login itself; a socket connection is
 * authenticated by the server instead) and logs in again when a real-time transport reconnects.
 * Emits 'login' and 'logout' on the client app.
 */
export class AuthenticationClient {
  readonly options: AuthenticationClientOptions
  authenticated = false
  /** Logged in, and neither logged out nor refused since: a reconnect logs in again even after a re-login failed. */
  private signedIn = false
  /** Counts login attempts: the failure of one that a newer attempt replaced changes nothing. */
  private generation = 0
  private current: Promise<LoginResult> | null = null
  private refreshTimer: unknown
  private refreshing: Promise<LoginResult> | null = null

  constructor(
    private readonly app: ClientApp,
    options: Partial<AuthenticationClientOptions> = {}
  ) {
    this.options = { ...DEFAULTS, storage: new MemoryStorage(), ...options }
    this.options.path = this.options.path.split('/').filter(Boolean).join('/')
    app.hooks([(context, next) => this.hook(context, next)])
    // The socket client re-emits disconnects; the login is sent again and buffered until reconnect. A refresh in
    // flight lost its answer with the connection: the next one is sent anew (the server answers a retry within its
    // reuse window with the same next refresh token).
    app.on('disconnect', () => {
      this.refreshing = null
      if (this.authenticated || this.signedIn) this.reAuthenticate(true).catch(() => undefined)
    })
  }

  async getAccessToken(): Promise<string | null> {
    return (await this.options.storage.getItem(this.options.storageKey)) || null
  }

  async setAccessToken(accessToken: string): Promise<void> {
    await this.options.storage.setItem(this.options.storageKey, accessToken)
  }

  async removeAccessToken(): Promise<void> {
    await this.options.storage.removeItem(this.options.storageKey)
    await this.options.storage.removeItem(this.options.refreshStorageKey)
  }

  async getRefreshToken(): Promise<string | null> {
    return (await this.options.storage.getItem(this.options.refreshStorageKey)) || null
  }

  /**
   * Exchanges the refresh token for a new pair (on a socket, the connection is re-authenticated in
   * place: no disconnect, no missed events). Called by itself shortly before the access token
   * expires. When it fails with an authentication error the session is over: tokens are dropped
   * and 'session-expired' is emitted.
   */
  refresh(): Promise<LoginResult> {
    if (this.refreshing) return this.refreshing
    const attempt = (async () => {
      const refreshToken = await this.getRefreshToken()
      if (!refreshToken) throw new NotAuthenticated('No refresh token found in storage')
      try {
        return await this.authenticate({ strategy: this.options.refreshStrategy, refreshToken })
      } catch (error) {
        if (isAuthError(error)) this.app.emit(SESSION_EXPIRED, error)
        throw error
      }
    })().finally(() => {
      if (this.refreshing === attempt) this.refreshing = null
    })
    this.refreshing = attempt
    return attempt
  }

  /** `authenticate()` without data is `reAuthenticate()`. */
  authenticate(data?: AuthenticationRequest, params?: Params): Promise<LoginResult> {
    if (!data) return this.reAuthenticate()
    const generation = ++this.generation
    const attempt = this.app
      .service(this.options.path)
      .create(data, params)
      .then(async (result) => {
        const authResult = result as unknown as LoginResult
        if (typeof authResult?.accessToken !== 'string')
          throw new NotAuthenticated('The server answered the login without an accessToken')
        await this.setAccessToken(authResult.accessToken)
        if (typeof authResult.refreshToken === 'string')
          await this.options.storage.setItem(this.options.refreshStorageKey, authResult.refreshToken)
        // A re-authentication with the access token (a reconnect) answers no refresh token: the stored one renews it.
        const refreshable = typeof authResult.refreshToken === 'string' || (await this.getRefreshToken()) !== null
        this.authenticated = true
        this.signedIn = true
        this.schedule(authResult, refreshable)
        this.app.emit('login', authResult)
        this.app.emit('authenticated', authResult)
        return authResult
      })
      .catch((error: unknown) => this.failed(error, generation))
    this.current = attempt
    return attempt
  }

  /** The current login, or a new one with the stored token when there is none or `force` is set. */
  reAuthenticate(force = false, strategy = this.options.jwtStrategy): Promise<LoginResult> {
    if (this.current && !force) return this.current
    const generation = ++this.generation
    const attempt = this.getAccessToken().then(async (accessToken) => {
      if (!accessToken) return this.failed(new NotAuthenticated('No accessToken found in storage'), generation)
      const refreshToken = await this.getRefreshToken()
      // An expired access token (a tab opened the next day, a socket back after a long outage) is
      // renewed with the refresh token, when there is one.
      return this.authenticate({ strategy, accessToken }).catch((error: unknown) => {
        if (!refreshToken || !isAuthError(error) || strategy !== this.options.jwtStrategy) throw error
        // The failed attempt dropped the stored tokens; the refresh token is still worth a try.
        return Promise.resolve(this.options.storage.setItem(this.options.refreshStorageKey, refreshToken)).then(() =>
          this.refresh()
        )
      })
    })
    this.current = attempt
    return attempt
  }

  async logout(): Promise<LoginResult | null> {
    try {
      await this.current?.catch(() => undefined)
      const result = (await this.app.service(this.options.path).remove(null)) as unknown as LoginResult
      await this.forget()
      this.app.emit('logout', result)
      return result
    } catch (error) {
      // Logging out with a token the server no longer accepts still logs out locally.
      if (!isAuthError(error)) {
        this.signedIn = false
        this.reset()
        throw error
      }
      await this.forget()
      return null
    }
  }

  /**
   * 401–407 from the server mean the token is no good: it is dropped (as @feathersjs/authentication-client does).
   * A login cut off by a dropped connection, after which the reconnect started another, leaves that one in charge.
   */
  private async failed(error: unknown, generation: number): Promise<never> {
    if (generation !== this.generation) throw error
    if (isAuthError(error)) await this.forget()
    else this.reset()
    throw error
  }

  private async forget(): Promise<void> {
    await this.removeAccessToken()
    this.signedIn = false
    this.reset()
  }

  private reset(): void {
    this.current = null
    this.authenticated = false
    this.options.timers.clearTimeout(this.refreshTimer)
    this.refreshTimer = undefined
  }

  /** Plans the refresh `refreshBefore` ms before the access token's `exp` (when there is a refresh token). */
  private schedule(result: LoginResult, refreshable: boolean): void {
    const { timers, refreshBefore } = this.options
    timers.clearTimeout(this.refreshTimer)
    this.refreshTimer = undefined
    const exp = result.authentication?.payload?.exp
    if (!refreshable || typeof exp !== 'number' || refreshBefore <= 0) return
    let at = exp * 1000 - refreshBefore
    const step = (): void => {
      const delay = at - timers.now()
      this.refreshTimer = timers.setTimeout(
        () => {
          if (delay > MAX_TIMER_DELAY) return step()
          this.refreshTimer = undefined
          this.refresh().catch((error: unknown) => {
            // Not refused, only not answered: tried again soon (a login meanwhile plans its own refresh).
            if (!isAuthError(error) && this.signedIn && this.refreshTimer === undefined) retry()
          })
        },
        Math.max(0, Math.min(delay, MAX_TIMER_DELAY))
      )
      ;(this.refreshTimer as { unref?: () => void } | undefined)?.unref?.()
    }
    const retry = (): void => {
      at = timers.now() + REFRESH_RETRY_MS
      step()
    }
    step()
  }

  private async hook(context: ClientHookContext, next: () => Promise<void>): Promise<void> {
    const isLogin = context.path === this.options.path && context.method === 'create'
    if (!isLogin) {
      // A call made while logging in waits for the login (and for the one after it, when a reconnect replaced it);
      // a failed login leaves it unauthenticated.
      let login = this.current
      let authResult = await login?.catch(() => null)
      while (this.current && this.current !== login) {
        login = this.current
        authResult = await login.catch(() => null)
      }
      const accessToken = authResult?.accessToken
      if (accessToken && this.app.transport?.name === 'rest') {
        const { header, scheme } = this.options
        context.params = {
          ...context.params,
          headers: { [header]: `${scheme} ${accessToken}`, ...context.params.headers }
        }
      }
    }
    try {
      await next()
    } catch (error) {
      // A socket whose re-login after a reconnect failed (timed out, its instance gone) refuses calls unrun with 401:
      // while signed in, log in again and send the call once more. A token the server refuses ends the session.
      const relogin = !isLogin && this.signedIn && this.app.transport?.name !== 'rest'
      if (!relogin || !(error instanceof NotAuthenticated)) throw error
      await this.reAuthenticate(true)
      await next()
    }
  }
}

function isAuthError(error: unknown): boolean {
  return error instanceof FeathersError && error.code > 400 && error.code < 408
}

/** `client.configure(authentication({ storage: window.localStorage }))`. */
export function authentication(options: Partial<AuthenticationClientOptions> = {}): (client: ClientApp) => void {
  return (client) => {
    const auth = new AuthenticationClient(client, options)
    Object.assign(client, {
      authentication: auth,
      authenticate: auth.authenticate.bind(auth),
      reAuthenticate: auth.reAuthenticate.bind(auth),
      logout: auth.logout.bind(auth)
    })
  }
}
