import { AdapterService } from './application/adapter-service.js'
import { App } from './application/app.js'
import { AuthenticationService } from './application/authentication/authentication-service.js'
import { authenticate } from './application/authentication/hooks/authenticate.js'
import { forbidQueryOn } from './application/authentication/hooks/forbid-query-on.js'
import { hashPassword } from './application/authentication/hooks/hash-password.js'
import { protect } from './application/authentication/hooks/protect.js'
import { restrictToOwner } from './application/authentication/hooks/restrict-to-owner.js'
import { JwtStrategy } from './application/authentication/jwt-strategy.js'
import { LocalStrategy } from './application/authentication/local-strategy.js'
import type { HookContext } from './application/hook-context.js'
import type { PasswordHasher } from './domain/auth/password-hasher.js'
import type { TokenService } from './domain/auth/token-service.js'
import type { Clock } from './domain/clock.js'
import type { Connection } from './domain/service/service.js'
import type { StoreFactory } from './domain/store/store-factory.js'

export interface ReferenceAppDeps {
  stores: StoreFactory
  /**
   * Ports of the authentication service. The composition root always passes them; without them the
   * app has no `authentication` service and nothing requires a login (transport tests plug in their own).
   */
  authentication?: { hasher: PasswordHasher; tokens: TokenService; clock?: Clock }
}

/**
 * The reference application people clone: a `messages` and a `users` service on whichever store the
 * composition root bound. Transports and authentication are added around it in src/container.ts.
 */
export function createReferenceApp({ stores, authentication }: ReferenceAppDeps): App {
  const app = new App()
  app.use('messages', new AdapterService(stores.create('messages'), {
    paginate: { default: 10, max: 50 },
    multi: ['patch', 'remove']
  }))
  app.use('users', new AdapterService(stores.create('users'), {
    paginate: { default: 10, max: 50 }
  }))
  app.service('users').hooks({ after: { all: [protect('password')] } })
  if (authentication) useAuthentication(app, authentication)
  useDefaultChannels(app)
  return app
}

/**
 * Local + JWT login at `authentication`. `users`: signup (create) is open, every other method needs a
 * token, passwords are stored hashed, and a user may only update, patch or remove themselves. `messages`:
 * every method needs a token; writes record the author, and only the author may change a message.
 */
function useAuthentication(app: App, { hasher, tokens, clock }: NonNullable<ReferenceAppDeps['authentication']>): void {
  app.use('authentication', new AuthenticationService({ tokens, clock, authStrategies: ['jwt', 'local'] })
    .register(new JwtStrategy(), new LocalStrategy(hasher)))
  const jwt = authenticate('jwt')
  // The ownership example: users change only themselves, messages only their author (403 otherwise).
  const itself = restrictToOwner({ ownerField: 'id' })
  const author = restrictToOwner({ ownerField: 'userId' })
  app.service('users').hooks({
    before: {
      all: [forbidQueryOn('password')],
      find: [jwt], get: [jwt], remove: [jwt, itself],
      create: [hashPassword('password')], update: [jwt, itself, hashPassword('password')], patch: [jwt, itself, hashPassword('password')]
    }
  })
  const recordAuthor = (context: HookContext) => {
    const userId = context.params.user?.id
    if (userId === undefined) return
    const stamp = (item: unknown) => ({ ...(item as object), userId })
    context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
  }
  // recordAuthor also on update/patch, so an author can neither drop nor hand over authorship.
  app.service('messages').hooks({
    before: { all: [jwt], create: [recordAuthor], update: [author, recordAuthor], patch: [author, recordAuthor], remove: [author] }
  })
}

/**
 * The channels of a generated Feathers app: real-time connections start 'anonymous', a login moves
 * them to 'authenticated', a logout takes them out of every channel, and every service event goes
 * to 'authenticated' only (payloads are what an external caller gets, so protected fields never leave).
 */
function useDefaultChannels(app: App): void {
  app.on('connection', (connection: Connection) => {
    // A handshake login (Authorization header) happens before 'connection'; don't undo it.
    if (!connection.authentication) app.channel('anonymous').join(connection)
  })
  app.on('login', (_result: unknown, { connection }: { connection?: Connection } = {}) => {
    if (!connection) return
    app.channel('anonymous').leave(connection)
    app.channel('authenticated').join(connection)
  })
  app.on('logout', (_result: unknown, { connection }: { connection?: Connection } = {}) => {
    if (connection) app.channel(app.channels).leave(connection)
  })
  app.publish(() => app.channel('authenticated'))
}
