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
import type { LoginThrottle } from './application/authentication/login-throttle.js'
import { RefreshStrategy } from './application/authentication/refresh-strategy.js'
import type { Sessions } from './application/authentication/sessions.js'
import type { HookContext } from './application/hook-context.js'
import { stampTimes } from './application/schema/stamp-times.js'
import { uniqueField } from './application/schema/unique-field.js'
import { validateSchemas } from './application/schema/validate-schemas.js'
import type { PasswordHasher } from './domain/auth/password-hasher.js'
import type { TokenService } from './domain/auth/token-service.js'
import type { Clock } from './domain/clock.js'
import type { SchemaValidator } from './domain/schema/schema-validator.js'
import type { Connection } from './domain/service/service.js'
import type { StoreFactory } from './domain/store/store-factory.js'
import type { UniqueKeys } from './domain/unique-keys.js'
import { messageSchemas, userSchemas } from './reference-schemas.js'

export interface ReferenceAppDeps {
  stores: StoreFactory
  /** Compiles the services' schemas (the Ajv adapter). */
  validator: SchemaValidator
  /** Where unique values (users' emails) are claimed; must be shared by every process of one database. */
  uniqueKeys: UniqueKeys
  /** Stamps createdAt/updatedAt (default: the system clock). */
  clock?: Clock
  /**
   * Ports of the authentication service. The composition root always passes them; without them the
   * app has no `authentication` service and nothing requires a login (transport tests plug in their own).
   */
  authentication?: {
    hasher: PasswordHasher
    tokens: TokenService
    clock?: Clock
    /** Refresh tokens, revocation and the `refresh` strategy (README "Sessions"); stateless tokens without. */
    sessions?: Sessions
    /** Failed-login limits per account and client address. */
    throttle?: LoginThrottle
  }
}

/**
 * The reference application people clone: a `messages` and a `users` service on whichever store the
 * composition root bound, each declared by its schemas (src/reference-schemas.ts). Transports and
 * authentication are added around it in src/container.ts.
 *
 * `users`: signup (create) is open, every other method needs a token, emails are unique
 * (case-insensitively), passwords are validated, stored hashed and never returned, and a user may
 * only update, patch or remove themselves. `messages`: every method needs a token; the server sets
 * the author and the timestamps, and only the author may change a message; create takes an array.
 */
export function createReferenceApp({ stores, validator, uniqueKeys, clock = systemClock, authentication }: ReferenceAppDeps): App {
  const app = new App({ validator })
  app.use('messages', new AdapterService(stores.create('messages'), {
    paginate: { default: 10, max: 50 },
    multi: ['create', 'patch', 'remove']
  }), { schemas: messageSchemas })
  app.use('users', new AdapterService(stores.create('users'), {
    paginate: { default: 10, max: 50 }
  }), { schemas: userSchemas })
  if (authentication) {
    const { hasher, tokens, clock: authClock = clock, sessions, throttle } = authentication
    const service = new AuthenticationService({
      tokens, clock: authClock, authStrategies: sessions ? ['jwt', 'local', 'refresh'] : ['jwt', 'local'],
      ...(sessions ? { sessions } : {}), ...(throttle ? { throttle } : {})
    }).register(new JwtStrategy(), new LocalStrategy(hasher))
    if (sessions) service.register(new RefreshStrategy())
    app.use('authentication', service)
  }
  // Without authentication (transport tests) nothing needs a login and passwords stay as sent.
  const login = authentication ? [authenticate('jwt')] : []
  const hash = authentication ? [hashPassword('password')] : []
  // The ownership example: users change only themselves, messages only their author (403 otherwise).
  const itself = authentication ? [restrictToOwner({ ownerField: 'id' })] : []
  const author = authentication ? [restrictToOwner({ ownerField: 'userId' })] : []
  const validate = validateSchemas()
  const email = uniqueField('email', { keys: uniqueKeys, message: 'email already registered' })
  const stamp = stampTimes(clock)

  // Order matters: log in, validate, check ownership, claim the email, then hash (a refused or
  // losing signup costs no bcrypt round).
  app.service('users').hooks({
    before: {
      all: [forbidQueryOn('password')],
      find: [...login, validate], get: [...login, validate], remove: [...login, ...itself, validate],
      create: [validate, email.before, ...hash],
      update: [...login, ...itself, validate, email.before, ...hash],
      patch: [...login, ...itself, validate, email.before, ...hash]
    },
    after: { all: [protect('password')], update: [email.after], patch: [email.after], remove: [email.after] },
    error: { all: [email.error] }
  })
  // recordAuthor also on update/patch, so an author can neither drop nor hand over authorship.
  app.service('messages').hooks({
    before: {
      all: [...login, validate],
      create: [recordAuthor, stamp],
      update: [...author, recordAuthor, stamp],
      patch: [...author, recordAuthor, stamp],
      remove: [...author]
    }
  })
  useDefaultChannels(app)
  return app
}

const systemClock: Clock = { now: () => Date.now() }

/** Before create/update/patch: the logged-in user is the author (refused from clients by the schema). */
function recordAuthor(context: HookContext): void {
  const userId = context.params.user?.id
  if (userId === undefined) return
  const stamp = (item: unknown) => ({ ...(item as object), userId })
  context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
}

/**
 * The channels of a generated Feathers app: real-time connections start 'anonymous', a login moves
 * them to 'authenticated', a logout takes them out of every channel, and every service event goes
 * to 'authenticated' only (payloads are what an external caller gets, so protected fields never leave).
 */
function useDefaultChannels(app: App): void {
  // A logout may be announced after its connection went away (a call in flight): it must not join again.
  const gone = new WeakSet<Connection>()
  app.on('disconnect', (connection: Connection) => { gone.add(connection) })
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
