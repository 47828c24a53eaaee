import { FeathersError, NotAuthenticated } from '../../../domain/errors/errors.js'
import type { AuthenticationRequest, Params } from '../../../domain/service/service.js'
import type { ClientApp, ClientHookContext } from '../client-app.js'
import { MemoryStorage, type TokenStorage } from './storage.js'

/** The login object of PROTOCOL.md §5.1 as the client sees it. */
export interface AuthenticationResult {
  accessToken: string
  authentication?: { strategy: string; accessToken?: string; payload?: Record<string, unknown> }
  [entity: string]: unknown
}

export interface AuthenticationClientOptions {
  /** Path of the authentication service. */
  path: string
  storage: TokenStorage
  storageKey: string
  /** REST only: the header and scheme the token travels in. */
  header: string
  scheme: string
  jwtStrategy: string
}

const DEFAULTS: Omit<AuthenticationClientOptions, 'storage'> = {
  path: 'authentication', storageKey: 'feathers-jwt', header: 'Authorization', scheme: 'Bearer', jwtStrategy: 'jwt'
}

declare module '../client-app.js' {
  interface ClientApp {
    /** Added by `configure(authentication())`. */
    authentication: AuthenticationClient
    authenticate(data?: AuthenticationRequest, params?: Params): Promise<AuthenticationResult>
    reAuthenticate(force?: boolean, strategy?: string): Promise<AuthenticationResult>
    logout(): Promise<AuthenticationResult | null>
  }
}

/**
 * The authentication client (PROTOCOL.md §8.3), for any transport: logs in through the
 * authentication service, keeps the token in storage, waits for a pending login before other calls,
 * sends `Authorization: Bearer <token>` on REST calls (except the login itself; a socket connection is
 * authenticated by the server instead) and logs in again when a real-time transport reconnects.
 * Emits 'login' and 'logout' on the client app.
 */
export class AuthenticationClient {
  readonly options: AuthenticationClientOptions
  authenticated = false
  private current: Promise<AuthenticationResult> | null = null

  constructor(private readonly app: ClientApp, options: Partial<AuthenticationClientOptions> = {}) {
    this.options = { ...DEFAULTS, storage: new MemoryStorage(), ...options }
    this.options.path = this.options.path.split('/').filter(Boolean).join('/')
    app.hooks([(context, next) => this.hook(context, next)])
    // The socket client re-emits disconnects; the login is sent again and buffered until reconnect.
    app.on('disconnect', () => {
      if (this.authenticated) this.reAuthenticate(true).catch(() => undefined)
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
  }

  /** `authenticate()` without data is `reAuthenticate()`. */
  authenticate(data?: AuthenticationRequest, params?: Params): Promise<AuthenticationResult> {
    if (!data) return this.reAuthenticate()
    const attempt = this.app.service(this.options.path).create(data, params).then(async (result) => {
      const authResult = result as unknown as AuthenticationResult
      if (typeof authResult?.accessToken !== 'string') throw new NotAuthenticated('The server answered the login without an accessToken')
      await this.setAccessToken(authResult.accessToken)
      this.authenticated = true
      this.app.emit('login', authResult)
      this.app.emit('authenticated', authResult)
      return authResult
    }).catch((error: unknown) => this.failed(error))
    this.current = attempt
    return attempt
  }

  /** The current login, or a new one with the stored token when there is none or `force` is set. */
  reAuthenticate(force = false, strategy = this.options.jwtStrategy): Promise<AuthenticationResult> {
    if (this.current && !force) return this.current
    const attempt = this.getAccessToken().then((accessToken) => {
      if (!accessToken) return this.failed(new NotAuthenticated('No accessToken found in storage'))
      return this.authenticate({ strategy, accessToken })
    })
    this.current = attempt
    return attempt
  }

  async logout(): Promise<AuthenticationResult | null> {
    try {
      await this.current?.catch(() => undefined)
      const result = await this.app.service(this.options.path).remove(null) as unknown as AuthenticationResult
      await this.removeAccessToken()
      this.reset()
      this.app.emit('logout', result)
      return result
    } catch (error) {
      // Logging out with a token the server no longer accepts still logs out locally.
      if (!isAuthError(error)) {
        this.reset()
        throw error
      }
      await this.forget()
      return null
    }
  }

  /** 401–407 from the server mean the token is no good: it is dropped (PROTOCOL.md §8.3). */
  private async failed(error: unknown): Promise<never> {
    if (isAuthError(error)) await this.forget()
    else this.reset()
    throw error
  }

  private async forget(): Promise<void> {
    await this.removeAccessToken()
    this.reset()
  }

  private reset(): void {
    this.current = null
    this.authenticated = false
  }

  private async hook(context: ClientHookContext, next: () => Promise<void>): Promise<void> {
    const isLogin = context.path === this.options.path && context.method === 'create'
    if (!isLogin) {
      // A call made while logging in waits for the login; a failed login leaves it unauthenticated.
      const authResult = await this.current?.catch(() => null)
      const accessToken = authResult?.accessToken
      if (accessToken && this.app.transport?.name === 'rest') {
        const { header, scheme } = this.options
        context.params = { ...context.params, headers: { [header]: `${scheme} ${accessToken}`, ...context.params.headers } }
      }
    }
    await next()
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
