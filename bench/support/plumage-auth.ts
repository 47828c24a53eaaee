import { AdapterService } from '../../src/application/adapter-service.js'
import type { App } from '../../src/application/app.js'
import { AuthenticationService } from '../../src/application/authentication/authentication-service.js'
import { authenticate } from '../../src/application/authentication/hooks/authenticate.js'
import { hashPassword } from '../../src/application/authentication/hooks/hash-password.js'
import { validateSchemas } from '../../src/application/schema/validate-schemas.js'
import { protect } from '../../src/application/authentication/hooks/protect.js'
import { JwtStrategy } from '../../src/application/authentication/jwt-strategy.js'
import { LocalStrategy } from '../../src/application/authentication/local-strategy.js'
import { BcryptPasswordHasher } from '../../src/infrastructure/auth/bcrypt-password-hasher.js'
import { JsonWebTokenService } from '../../src/infrastructure/auth/json-web-token-service.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { benchMessageSchemas } from './message-schemas.js'
import { BENCH_SECRET, BENCH_USER, SECURE_PATH } from './auth-setup.js'
import { seedRecords } from './seed.js'

/**
 * The reference app's authentication (local + jwt, bcrypt 10) plus a seeded, schema-validated service behind
 * authenticate('jwt'). Call before app.setup() on an App with a validator.
 */
export async function addAuthentication(app: App): Promise<void> {
  app.use('users', new AdapterService(new InMemoryStore(), { paginate: { default: 10, max: 50 } }))
  app.service('users').hooks({ before: { create: [hashPassword('password')] }, after: { all: [protect('password')] } })
  app.use(
    'authentication',
    new AuthenticationService({
      tokens: new JsonWebTokenService({ secret: BENCH_SECRET }),
      authStrategies: ['jwt', 'local']
    }).register(new JwtStrategy(), new LocalStrategy(new BcryptPasswordHasher(10)))
  )
  app.use(SECURE_PATH, new AdapterService(new InMemoryStore(), { paginate: { default: 10, max: 50 } }), {
    schemas: benchMessageSchemas
  })
  app.service(SECURE_PATH).hooks({ before: { all: [authenticate('jwt'), validateSchemas()] } })
  await app.service('users').create(BENCH_USER)
  for (const record of seedRecords()) await app.service(SECURE_PATH).create(record)
}
