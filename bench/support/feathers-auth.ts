import { AuthenticationService, JWTStrategy, authenticate } from '@feathersjs/authentication'
import { LocalStrategy, hooks as localHooks } from '@feathersjs/authentication-local'
import type { Application } from '@feathersjs/feathers'
import { MemoryService } from '@feathersjs/memory'
import { BENCH_SECRET, BENCH_USER, SECURE_PATH } from './auth-setup.js'
import { feathersMessageHooks } from './feathers-schemas.js'
import { seedRecords } from './seed.js'

/** The authentication service of a generated Feathers v5 app (local + jwt, v5 JWT claims), on `app`'s settings. */
export function feathersAuthenticationService(app: Application): AuthenticationService {
  app.set('authentication', {
    secret: BENCH_SECRET,
    entity: 'user',
    service: 'users',
    authStrategies: ['jwt', 'local'],
    jwtOptions: {
      header: { typ: 'access' },
      audience: 'https://yourdomain.com',
      issuer: 'feathers',
      algorithm: 'HS256',
      expiresIn: '1d'
    },
    local: { usernameField: 'email', passwordField: 'password' }
  })
  const auth = new AuthenticationService(app)
  auth.register('jwt', new JWTStrategy())
  auth.register('local', new LocalStrategy())
  return auth
}

/**
 * The same setup as a generated Feathers v5 app: local + jwt, hashPassword/protect, a service behind
 * authenticate('jwt').
 */
export async function addFeathersAuthentication(app: Application): Promise<void> {
  app.use('authentication', feathersAuthenticationService(app))
  app.use('users', new MemoryService({ paginate: { default: 10, max: 50 } }))
  app.service('users').hooks({
    before: { create: [localHooks.hashPassword('password')] },
    after: { all: [localHooks.protect('password')] }
  })
  app.use(SECURE_PATH, new MemoryService({ paginate: { default: 10, max: 50 } }))
  app.service(SECURE_PATH).hooks({ around: { all: [authenticate('jwt')] }, before: feathersMessageHooks as never })
  await app.service('users').create(BENCH_USER)
  for (const record of seedRecords()) await app.service(SECURE_PATH).create(record)
}
