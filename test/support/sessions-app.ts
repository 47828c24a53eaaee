import type { App } from '../../src/application/app.js'
import type { AuthenticationResult } from '../../src/application/authentication/authentication-strategy.js'
import { LoginThrottle } from '../../src/application/sessions/login-throttle.js'
import type { AuthenticationService } from '../../src/application/authentication/authentication-service.js'
import { RefreshStrategy } from '../../src/application/sessions/refresh-strategy.js'
import { revokeOnEntityChanges } from '../../src/application/sessions/revoke-on-entity-changes.js'
import { Sessions } from '../../src/application/sessions/sessions.js'
import type { LoginAttempts } from '../../src/domain/auth/login-attempts.js'
import type { PasswordHasher } from '../../src/domain/auth/password-hasher.js'
import type { SessionStore } from '../../src/domain/auth/session-store.js'
import type { Params } from '../../src/domain/service/service.js'
import { CryptoSecretTokens } from '../../src/infrastructure/auth/crypto-secret-tokens.js'
import { FakePasswordHasher } from './fake-password-hasher.js'
import { JsonWebTokenService } from '../../src/infrastructure/auth/json-web-token-service.js'
import { FakeClock } from './fake-clock.js'
import { InMemoryLoginAttempts } from '../../src/infrastructure/memory/in-memory-login-attempts.js'
import { InMemorySessionStore } from '../../src/infrastructure/memory/in-memory-session-store.js'
import { InMemoryStoreFactory } from '../../src/infrastructure/memory/in-memory-store-factory.js'
import { InMemoryUniqueKeys } from '../../src/infrastructure/memory/in-memory-unique-keys.js'
import { AjvSchemaValidator } from '../../src/infrastructure/schema/ajv-schema-validator.js'
import { createReferenceApp } from '../../src/reference-app.js'
import type { StoreFactory } from '../../src/domain/store/store-factory.js'
import type { UniqueKeys } from '../../src/domain/unique-keys.js'
import { useRules } from '../../src/application/rules/index.js'
import { rules } from '../../src/services/rules.js'

export const SECRET = 'sessions-test-secret-0123456789'

export interface SessionsAppOptions {
  clock?: FakeClock
  /** Share these between apps to make them instances of one deployment. */
  store?: SessionStore
  attempts?: LoginAttempts
  stores?: StoreFactory
  uniqueKeys?: UniqueKeys
  maxFailures?: number
  addressMaxFailures?: number
  /** Default: a FakePasswordHasher (returned as `hasher`, it records every check). */
  hasher?: PasswordHasher
  /** Sessions' reuse window (ms; default theirs, 30 s). */
  reuseWindow?: number
}

/** The reference app with sessions and throttling on memory adapters, a fake clock and a fake hasher. */
export async function sessionsApp(options: SessionsAppOptions = {}) {
  const clock = options.clock ?? new FakeClock()
  const store = options.store ?? new InMemorySessionStore()
  const attempts = options.attempts ?? new InMemoryLoginAttempts()
  const tokens = new JsonWebTokenService({ secret: SECRET, expiresIn: '15m' }, clock)
  // Keyed by the deployment's secret, as the sessions module does: instances derive the same next refresh token.
  const sessions = new Sessions(store, new CryptoSecretTokens(SECRET), clock, {
    accessTokenTtl: 15 * 60_000,
    ...(options.reuseWindow === undefined ? {} : { reuseWindow: options.reuseWindow })
  })
  const hasher = options.hasher ?? new FakePasswordHasher()
  const throttle = new LoginThrottle(attempts, clock, {
    maxFailures: options.maxFailures ?? 10,
    addressMaxFailures: options.addressMaxFailures ?? 20
  })
  const app: App = createReferenceApp({
    stores: options.stores ?? new InMemoryStoreFactory(),
    validator: new AjvSchemaValidator(),
    uniqueKeys: options.uniqueKeys ?? new InMemoryUniqueKeys(),
    clock,
    authentication: { hasher, tokens, clock, sessions, throttle, strategies: [new RefreshStrategy()] }
  })
  // As the rules and sessions modules do in the server (src/modules/rules.ts, src/modules/sessions.ts).
  useRules(app, rules)
  revokeOnEntityChanges(app, app.service<AuthenticationService>('authentication'), sessions)
  await app.setup()
  const auth = app.service('authentication')
  const REST: Params = { provider: 'rest', address: '10.0.0.1' }
  const login = (email: string, password: string, params: Params = REST) =>
    auth.create({ strategy: 'local', email, password }, params) as Promise<
      AuthenticationResult & { refreshToken: string; accessToken: string }
    >
  const refresh = (refreshToken: string) =>
    auth.create({ strategy: 'refresh', refreshToken }, REST) as Promise<
      AuthenticationResult & { refreshToken: string; accessToken: string }
    >
  const bearer = (accessToken: string): Params => ({
    provider: 'rest',
    authentication: { strategy: 'jwt', accessToken }
  })
  const logout = (accessToken: string) => auth.remove(null, bearer(accessToken))
  // An authenticated call on a service of the core app (users needs a login to find), so it holds in a blank app too.
  const findUsers = (accessToken: string) => app.service('users').find(bearer(accessToken))
  const signUp = (email: string, password = 'password-1') =>
    app.service('users').create({ email, password }, { provider: 'rest' }) as Promise<{
      id: string | number
      email: string
    }>
  return {
    app,
    clock,
    store,
    attempts,
    hasher,
    sessions,
    tokens,
    login,
    refresh,
    logout,
    findUsers,
    signUp,
    bearer,
    REST
  }
}

/** The rejection of a promise that must fail. */
export async function failure(
  promise: Promise<unknown>
): Promise<{ name: string; code: number; message: string; data?: Record<string, unknown> }> {
  try {
    await promise
  } catch (error) {
    return error as { name: string; code: number; message: string; data?: Record<string, unknown> }
  }
  throw new Error('expected a failure')
}
