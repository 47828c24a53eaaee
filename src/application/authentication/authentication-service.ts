import type { Clock } from '../../domain/clock.js'
import { NotAuthenticated } from '../../domain/errors/errors.js'
import type { TokenPayload, TokenService } from '../../domain/auth/token-service.js'
import type { AuthenticationRequest, Data, Id, NullableId, Params } from '../../domain/service/service.js'
import type { App } from '../app.js'
import type { HookContext } from '../hook-context.js'
import type { AuthenticationResult, LoginResult } from '../../domain/auth/authentication-result.js'
import type { AuthenticationStrategy } from './authentication-strategy.js'
import { JwtStrategy } from './jwt-strategy.js'
import { LocalStrategy } from './local-strategy.js'
import type { AuthenticationSessions, LoginLimits } from './session-ports.js'
import { declaredIdField } from '../id-field.js'
import { isRecord } from '../../domain/objects.js'

export interface AuthenticationServiceOptions {
  tokens: TokenService
  clock?: Clock
  /** Strategies `create` may use (docs/wire-protocol.md, Failures); default: every registered strategy. */
  authStrategies?: string[]
  /**
   * Server-side sessions: every login also answers a `refreshToken`, access tokens carry the
   * session id (`sid`) and are checked against the deny-list, logout revokes, and changing a
   * password or deleting an entity revokes all its sessions. Without it tokens are stateless.
   */
  sessions?: AuthenticationSessions
  /** Limits failed logins of strategies with a username (local) per account and client address. */
  throttle?: LoginLimits
}

/** What logging in takes and answers, for generated documentation (OpenAPI, AsyncAPI): see `describeLogin`. */
export interface LoginDescription {
  /** Each strategy `create` accepts, with the body fields it reads besides `strategy` (all required). */
  strategies: { name: string; fields: string[]; summary: string }[]
  /** Logins answer a `refreshToken` too (sessions are on). */
  refreshTokens: boolean
  /** Failed logins with a username are limited: a 429 with `Retry-After`. */
  throttled: boolean
}

/**
 * The `authentication` service (docs/wire-protocol.md, Authentication): `create` authenticates with a named strategy
 * and
 * answers `{ accessToken, authentication, user }`; `remove` is logout. It never publishes service
 * events; instead it emits the app events `login` and `logout` with `{ provider, connection }`, which
 * transports use to bind connections and the app uses to join channels.
 */
export class AuthenticationService {
  readonly tokens: TokenService
  readonly clock: Clock
  readonly sessions?: AuthenticationSessions
  private readonly strategies = new Map<string, AuthenticationStrategy>()
  private app?: App

  constructor(private readonly options: AuthenticationServiceOptions) {
    this.tokens = options.tokens
    this.clock = options.clock ?? { now: () => Date.now() }
    if (options.sessions) this.sessions = options.sessions
  }

  register(...strategies: AuthenticationStrategy[]): this {
    for (const strategy of strategies) this.strategies.set(strategy.name, strategy)
    return this
  }

  getStrategy(name: string): AuthenticationStrategy | undefined {
    return this.strategies.get(name)
  }

  get application(): App {
    if (!this.app)
      throw new Error('The authentication service is not set up yet: register it with app.use and call app.setup()')
    return this.app
  }

  get authStrategies(): string[] {
    return this.options.authStrategies ?? [...this.strategies.keys()]
  }

  /** The login bodies this service accepts and what it answers, from its strategies and options. */
  describeLogin(): LoginDescription {
    const strategies = this.authStrategies.flatMap((name) => {
      const strategy = this.strategies.get(name)
      if (strategy instanceof LocalStrategy)
        return [{ name, fields: [strategy.usernameField, strategy.passwordField], summary: 'username and password' }]
      if (strategy instanceof JwtStrategy)
        return [{ name, fields: ['accessToken'], summary: 'an access token: re-authenticate (the same token back)' }]
      if (strategy?.refreshes)
        return [{ name, fields: ['refreshToken'], summary: 'a refresh token: a new access and refresh token' }]
      return strategy ? [{ name, fields: [], summary: `the '${name}' strategy` }] : []
    })
    return {
      strategies,
      refreshTokens: this.sessions !== undefined,
      throttled: this.options.throttle?.enabled === true
    }
  }

  /**
   * Runs the strategy named in `data` if it is one of `allowed`; throws the v5 messages (docs/wire-protocol.md,
   * Failures).
   */
  async authenticate(
    data: AuthenticationRequest | undefined,
    params: Params,
    ...allowed: string[]
  ): Promise<AuthenticationResult> {
    const name = typeof data === 'object' && data !== null ? data.strategy : undefined
    if (typeof name !== 'string' || name === '')
      throw new NotAuthenticated('Invalid authentication information (no `strategy` set)')
    if (!allowed.includes(name))
      throw new NotAuthenticated('Invalid authentication information (strategy not allowed in authStrategies)')
    const strategy = this.strategies.get(name)
    if (!strategy) throw new NotAuthenticated('Invalid authentication information')
    const { throttle } = this.options
    const usernameField = (strategy as { usernameField?: unknown }).usernameField
    // Logins from outside with a username are throttled; internal calls are trusted.
    if (throttle && params.provider !== undefined && typeof usernameField === 'string') {
      const username = data![usernameField]
      const address = params.address ?? params.connection?.address
      return throttle.guard(
        {
          account: typeof username === 'string' ? username.trim().toLowerCase() : '',
          ...(typeof address === 'string' && address !== '' ? { address } : {})
        },
        () => strategy.authenticate(data!, params)
      )
    }
    return strategy.authenticate(data!, params)
  }

  /**
   * Login: a new token for a local (or other) authentication; the same token back for jwt (docs/wire-protocol.md,
   * Re-authentication and logout).
   */
  async create(data: AuthenticationRequest, params: Params = {}): Promise<LoginResult> {
    const allowed = this.authStrategies
    // `restrictStrategies` may already have authenticated this request in a before hook.
    const checked = params.authResult as AuthenticationResult | undefined
    if (checked && !allowed.includes(checked.authentication.strategy)) {
      throw new NotAuthenticated('Invalid authentication information (strategy not allowed in authStrategies)')
    }
    try {
      return await this.respond(checked ?? (await this.authenticate(data, params, ...allowed)), params)
    } catch (error) {
      // A failed refresh on a logged-in connection ends its session there: it drops to anonymous
      // now rather than when its last access token expires.
      const { connection, provider } = params
      if (
        error instanceof NotAuthenticated &&
        connection?.authentication &&
        this.strategies.get(String(data?.strategy))?.refreshes === true
      ) {
        this.application.emit('logout', null, { provider, connection })
      }
      throw error
    }
  }

  /**
   * Logout: verifies the caller's token and answers like a jwt re-authentication. With sessions the
   * session is revoked (its refresh tokens and access tokens); without, tokens stay valid until they expire.
   */
  async remove(id: NullableId, params: Params = {}): Promise<LoginResult> {
    const { authentication } = params
    if (id !== null && id !== undefined && id !== authentication?.accessToken)
      throw new NotAuthenticated('Invalid access token')
    const result = await this.respond(await this.authenticate(authentication, params, ...this.authStrategies), params)
    if (this.sessions && result.authentication.payload) await this.sessions.logout(result.authentication.payload)
    return result
  }

  setup(app: App, path: string): void {
    // Hooks and strategy subscriptions are added once, even if the app is set up again.
    if (this.app === app) return
    this.app = app
    for (const strategy of this.strategies.values()) strategy.setup?.(this)
    const silence = (context: HookContext) => {
      context.event = null
    }
    const announce = (event: 'login' | 'logout') => (context: HookContext) => {
      const { provider, connection } = context.params
      app.emit(event, context.dispatch ?? context.result, { provider, connection }, context)
    }
    app
      .service(path)
      .hooks({ before: { all: [silence] }, after: { create: [announce('login')], remove: [announce('logout')] } })
  }

  private async respond(result: AuthenticationResult, params: Params): Promise<LoginResult> {
    const strategy = this.strategies.get(result.authentication.strategy)
    const entityName = strategy?.entity ?? null
    const entity = entityName === null ? undefined : result[entityName]
    const id = strategy && isRecord(entity) ? (entity[this.idField(strategy)] as Id | undefined) : undefined
    let { accessToken } = result
    let payload = result.authentication.payload
    let refreshToken: string | undefined
    if (accessToken === undefined) {
      const claims: TokenPayload = {
        ...(id !== undefined && entityName ? { [`${entityName}Id`]: id } : {}),
        ...payload
      }
      // A login starts a session; a refresh continues its own (the strategy put its `sid` in the payload).
      if (this.sessions && id !== undefined && typeof claims.sid !== 'string') claims.sid = this.sessions.newFamily()
      accessToken = await this.tokens.sign(claims, id !== undefined ? { subject: String(id) } : {})
      payload = await this.tokens.verify(accessToken)
      // A refresh answers its session's next refresh token; a login issues the first of its new session.
      if (this.sessions && id !== undefined)
        refreshToken =
          strategy?.refreshes && typeof result.refreshToken === 'string'
            ? result.refreshToken
            : await this.sessions.issueRefreshToken(claims.sid as string, id)
    }
    const { accessToken: _verified, authentication, ...rest } = result
    const response: LoginResult = { accessToken, authentication: { ...authentication, payload }, ...rest }
    if (entityName && entity !== undefined && id !== undefined)
      response[entityName] = await this.externalView(strategy!, id, entity as Data, params)
    if (refreshToken !== undefined) response.refreshToken = refreshToken
    return response
  }

  /** The entity as an external `get` returns it: the entity service's hooks run, so protected fields go. */
  private async externalView(strategy: AuthenticationStrategy, id: Id, entity: Data, params: Params): Promise<unknown> {
    if (params.provider === undefined) return entity
    const { provider, headers, connection } = params
    return this.application.service(strategy.service).get(id, {
      provider,
      headers,
      connection,
      authenticated: true,
      [strategy.entity!]: entity,
      authentication: params.authentication
    })
  }

  private idField(strategy: AuthenticationStrategy): string {
    return declaredIdField(this.application.service(strategy.service)) ?? 'id'
  }
}
