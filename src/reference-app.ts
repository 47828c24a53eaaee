import { App } from './application/app.js'
import { AuthenticationService } from './application/authentication/authentication-service.js'
import { JwtStrategy } from './application/authentication/jwt-strategy.js'
import { LocalStrategy } from './application/authentication/local-strategy.js'
import type { AuthenticationStrategy } from './application/authentication/authentication-strategy.js'
import type { AuthenticationSessions, LoginLimits } from './application/authentication/session-ports.js'
import type { AppExtension } from './application/extensions.js'
import type { PasswordHasher } from './domain/auth/password-hasher.js'
import type { TokenService } from './domain/auth/token-service.js'
import type { Clock } from './domain/clock.js'
import type { SchemaValidator } from './domain/schema/schema-validator.js'
import type { Connection } from './domain/service/service.js'
import type { StoreFactory } from './domain/store/store-factory.js'
import type { UniqueKeys } from './domain/unique-keys.js'
import { services, type RegisteredServices } from './services/registry.js'

/**
 * The reference app's services by path: `app.service('messages')` is typed from this map, which derives from
 * the registry of src/services/index.ts (each service's `use*` function returns it).
 */
export type ReferenceServices = RegisteredServices & { authentication: AuthenticationService }

export interface ReferenceAppDeps {
  stores: StoreFactory
  /** Compiles the services' schemas (the Ajv adapter). */
  validator: SchemaValidator
  /** Where unique values (users' emails) are claimed; must be shared by every process of one database. */
  uniqueKeys: UniqueKeys
  /** Stamps createdAt/updatedAt (default: the system clock). */
  clock?: Clock
  /** Optional modules' extensions (metrics, tracing, connection recovery…): see `App.extend`. */
  extensions?: readonly AppExtension[]
  /**
   * Ports of the authentication service. The composition root always passes them; without them the
   * app has no `authentication` service and nothing requires a login (transport tests plug in their own).
   */
  authentication?: {
    hasher: PasswordHasher
    tokens: TokenService
    clock?: Clock
    /** Refresh tokens and revocation (README "Sessions", the sessions module); stateless tokens without. */
    sessions?: AuthenticationSessions
    /** Failed-login limits per account and client address. */
    throttle?: LoginLimits
    /** More strategies beside `jwt` and `local` (the sessions module's `refresh`). */
    strategies?: AuthenticationStrategy[]
  }
}

/**
 * The reference application people clone: the services registered in src/services/index.ts (each
 * with its schemas and hooks in its own folder) on whichever store the composition root bound,
 * the authentication service and the channels. Transports and modules (the rules among them) are added around it
 * in src/container.ts.
 */
export function createReferenceApp({
  stores,
  validator,
  uniqueKeys,
  clock = systemClock,
  extensions = [],
  authentication
}: ReferenceAppDeps): App<ReferenceServices> {
  const app = new App<ReferenceServices>({ validator, extensions })
  // Without authentication (transport tests) nothing needs a login and passwords stay as sent.
  const withLogin = authentication !== undefined
  for (const use of Object.values(services)) use(app, { stores, clock, uniqueKeys, authentication: withLogin })
  if (authentication) {
    const { hasher, tokens, clock: authClock = clock, sessions, throttle, strategies = [] } = authentication
    const service = new AuthenticationService({
      tokens,
      clock: authClock,
      authStrategies: ['jwt', 'local', ...strategies.map((strategy) => strategy.name)],
      ...(sessions ? { sessions } : {}),
      ...(throttle ? { throttle } : {})
    }).register(new JwtStrategy(), new LocalStrategy(hasher), ...strategies)
    app.use('authentication', service)
  }
  useDefaultChannels(app)
  return app
}

const systemClock: Clock = { now: () => Date.now() }

/**
 * The channels of a generated Feathers app: real-time connections start 'anonymous', a login moves
 * them to 'authenticated', a logout takes them out of every channel, and every service event goes
 * to 'authenticated' only (payloads are what an external caller gets, so protected fields never leave).
 */
function useDefaultChannels(app: App): void {
  // A logout may be announced after its connection went away (a call in flight): it must not join again.
  const gone = new WeakSet<Connection>()
  app.on('disconnect', (connection: Connection) => {
    gone.add(connection)
  })
  app.on('connection', (connection: Connection) => {
    // A handshake login (Authorization header) happens before 'connection'; don't undo it.
    if (!connection.authentication) app.channel('anonymous').join(connection)
  })
  // A login on a connection that is already logged in (a refresh in place) moves it: out of every
  // channel of the old login, into those of the new one, without a moment outside 'authenticated'.
  app.on('login', (_result: unknown, { connection }: { connection?: Connection } = {}) => {
    if (!connection) return
    for (const name of app.channels) if (name !== 'authenticated') app.channel(name).leave(connection)
    app.channel('authenticated').join(connection)
  })
  // A logout (or an expired token) takes the connection back to 'anonymous'.
  app.on('logout', (_result: unknown, { connection }: { connection?: Connection } = {}) => {
    if (!connection) return
    app.channel(app.channels).leave(connection)
    if (!gone.has(connection)) app.channel('anonymous').join(connection)
  })
  app.publish(() => app.channel('authenticated'))
}
