import { AdapterService, type AdapterServiceOptions } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import { AuthenticationService } from '../../src/application/authentication/authentication-service.js'
import type { AuthenticationStrategy } from '../../src/application/authentication/authentication-strategy.js'
import { authenticate } from '../../src/application/authentication/hooks/authenticate.js'
import { hashPassword } from '../../src/application/authentication/hooks/hash-password.js'
import { protect } from '../../src/application/authentication/hooks/protect.js'
import { JwtStrategy, type JwtStrategyOptions } from '../../src/application/authentication/jwt-strategy.js'
import { LocalStrategy, type LocalStrategyOptions } from '../../src/application/authentication/local-strategy.js'
import { FakePasswordHasher } from './fake-password-hasher.js'
import { JsonWebTokenService } from '../../src/infrastructure/auth/json-web-token-service.js'
import { FakeClock } from './fake-clock.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'

export interface AuthTestOptions {
  local?: LocalStrategyOptions
  jwt?: JwtStrategyOptions
  users?: AdapterServiceOptions
  /** Path of the entity service (default 'users'). */
  service?: string
  authStrategies?: string[]
  extraStrategies?: AuthenticationStrategy[]
}

/**
 * An app with the authentication service (fast fake hasher, real JWTs on a fake clock), an entity
 * service with hashPassword + protect, and `messages` behind authenticate('jwt').
 */
export async function authTestApp(options: AuthTestOptions = {}) {
  const app = new App()
  const clock = new FakeClock()
  const hasher = new FakePasswordHasher()
  const tokens = new JsonWebTokenService({ secret: 'unit-test-secret-0123456789' }, clock)
  const path = options.service ?? 'users'
  const passwordField = options.local?.passwordField ?? 'password'
  app.use(path, new AdapterService(new InMemoryStore(), { paginate: { default: 10, max: 50 }, ...options.users }))
  app.service(path).hooks({
    before: {
      create: [hashPassword(passwordField, { strategy: options.local?.name ?? 'local' })],
      find: [authenticate('jwt')],
      get: [authenticate('jwt')]
    },
    after: { all: [protect(passwordField)] }
  })
  const auth = new AuthenticationService({ tokens, clock, authStrategies: options.authStrategies }).register(
    new JwtStrategy({ service: path, ...options.jwt }),
    new LocalStrategy(hasher, { service: path, ...options.local }),
    ...(options.extraStrategies ?? [])
  )
  app.use('authentication', auth)
  app.use('messages', new AdapterService(new InMemoryStore()))
  app.service('messages').hooks({ before: { all: [authenticate('jwt')] } })
  await app.setup()
  return { app, clock, hasher, tokens, auth: app.service('authentication') as unknown as AuthenticationService }
}

export const REST = { provider: 'rest' } as const

export function bearer(accessToken: string) {
  return { provider: 'rest', authentication: { strategy: 'jwt', accessToken } }
}
