import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import type {
  AuthenticationResult,
  AuthenticationStrategy
} from '../../../src/application/authentication/authentication-strategy.js'
import { authenticate } from '../../../src/application/authentication/hooks/authenticate.js'
import { forbidQueryOn } from '../../../src/application/authentication/hooks/forbid-query-on.js'
import { hashPassword } from '../../../src/application/authentication/hooks/hash-password.js'
import { protect } from '../../../src/application/authentication/hooks/protect.js'
import { restrictStrategies } from '../../../src/application/authentication/hooks/restrict-strategies.js'
import type { HookContext } from '../../../src/application/hook-context.js'
import type { Params } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { authTestApp, bearer, REST } from '../../support/auth-test-app.js'

async function loggedIn() {
  const setup = await authTestApp()
  await setup.app.service('users').create({ email: 'a@x.io', password: 'secret' })
  const { accessToken } = await setup.auth.create({ strategy: 'local', email: 'a@x.io', password: 'secret' }, REST)
  return { ...setup, accessToken: accessToken! }
}

describe('authenticate hook', () => {
  it('refuses external calls without credentials with "Not authenticated" and lets internal calls pass', async () => {
    const { app } = await loggedIn()
    await expect(app.service('messages').find(REST)).rejects.toMatchObject({
      name: 'NotAuthenticated',
      message: 'Not authenticated',
      code: 401
    })
    await expect(app.service('messages').find()).resolves.toEqual([])
  })

  it('sets params.user (with the hash, as v5), params.authentication and params.authenticated', async () => {
    const { app, accessToken } = await loggedIn()
    let seen: Params = {}
    app.service('messages').hooks({
      before: {
        find: [
          (context: HookContext) => {
            seen = context.params
          }
        ]
      }
    })
    await app.service('messages').find(bearer(accessToken))
    expect(seen.user).toEqual({ email: 'a@x.io', password: 'fake$secret', id: 0 })
    expect(seen.authenticated).toBe(true)
    expect(seen.authentication).toEqual({
      strategy: 'jwt',
      accessToken,
      payload: expect.objectContaining({ sub: '0' })
    })
    expect(seen.provider).toBe('rest')
  })

  it('only accepts the strategies it was given', async () => {
    const { app } = await loggedIn()
    app.use('strict', new AdapterService(new InMemoryStore()))
    app.service('strict').hooks({ before: { all: [authenticate('jwt')] } })
    const params = { provider: 'rest', authentication: { strategy: 'local', email: 'a@x.io', password: 'secret' } }
    await expect(app.service('strict').find(params)).rejects.toThrow('strategy not allowed')
  })

  it('must be a before hook and needs a strategy', async () => {
    expect(() => authenticate({ strategies: [] })).toThrow('at least one')
    const { app, accessToken } = await loggedIn()
    app.use('wrong', new AdapterService(new InMemoryStore()))
    app.service('wrong').hooks({ after: { all: [authenticate('jwt')] } })
    await expect(app.service('wrong').find(bearer(accessToken))).rejects.toThrow('must be used as a before hook')
  })
})

describe('restrictStrategies (guard of the authentication service create)', () => {
  const apiKey: AuthenticationStrategy = {
    name: 'api-key',
    entity: null,
    service: 'users',
    async authenticate(data): Promise<AuthenticationResult> {
      if (data.key !== 'k') throw new Error('bad key')
      return { authentication: { strategy: 'api-key' } }
    }
  }

  it('issues tokens only for a valid JWT or a successful local login, comparing the password once', async () => {
    const { app, auth, hasher } = await authTestApp({
      extraStrategies: [apiKey],
      authStrategies: ['jwt', 'local', 'api-key']
    })
    await app.service('users').create({ email: 'a@x.io', password: 'secret' })
    await expect(auth.create({ strategy: 'api-key', key: 'k' }, REST)).resolves.toHaveProperty('accessToken')
    app.service('authentication').hooks({ before: { create: [restrictStrategies('jwt', 'local')] } })
    await expect(auth.create({ strategy: 'api-key', key: 'k' }, REST)).rejects.toThrow(
      '(strategy not allowed in authStrategies)'
    )
    const before = hasher.verified.length
    const { accessToken } = await auth.create({ strategy: 'local', email: 'a@x.io', password: 'secret' }, REST)
    expect(hasher.verified.length).toBe(before + 1)
    await expect(auth.create({ strategy: 'local', email: 'a@x.io', password: 'wrong' }, REST)).rejects.toThrow(
      'Invalid login'
    )
    await expect(auth.create({ strategy: 'jwt', accessToken: accessToken! }, REST)).resolves.toHaveProperty(
      'accessToken',
      accessToken
    )
    await expect(auth.create({ strategy: 'jwt', accessToken: `${accessToken!}x` }, REST)).rejects.toThrow(
      'invalid signature'
    )
  })

  it('still honours authStrategies', async () => {
    const { app, auth } = await authTestApp({ authStrategies: ['jwt'] })
    await app.service('users').create({ email: 'a@x.io', password: 'secret' })
    app.service('authentication').hooks({ before: { create: [restrictStrategies('jwt', 'local')] } })
    await expect(auth.create({ strategy: 'local', email: 'a@x.io', password: 'secret' }, REST)).rejects.toThrow(
      'strategy not allowed'
    )
  })
})

describe('hashPassword hook', () => {
  function app(hook = hashPassword('password', { hash: async (plain) => `h(${plain})` })) {
    const application = new App()
    application.use('users', new AdapterService(new InMemoryStore(), { multi: true }))
    application.service('users').hooks({ before: { create: [hook], update: [hook], patch: [hook] } })
    return application.service('users')
  }

  it("hashes on create, update and patch, arrays included, without touching the caller's data", async () => {
    const users = app()
    const data = { email: 'a', password: 'p' }
    await expect(users.create(data)).resolves.toEqual({ email: 'a', password: 'h(p)', id: 0 })
    expect(data.password).toBe('p')
    await expect(users.create([{ password: 'x' }, { email: 'no password' }])).resolves.toEqual([
      { password: 'h(x)', id: 1 },
      { email: 'no password', id: 2 }
    ])
    await expect(users.update(0, { password: 'u' })).resolves.toEqual({ password: 'h(u)', id: 0 })
    await expect(users.patch(0, { password: 'q' })).resolves.toEqual({ password: 'h(q)', id: 0 })
    await expect(users.patch(1, { email: 'b' })).resolves.toEqual({ password: 'h(x)', email: 'b', id: 1 })
  })

  it('hashes a value that already looks like a hash again (documented choice)', async () => {
    await expect(app().create({ password: 'h(p)' })).resolves.toEqual({ password: 'h(h(p))', id: 0 })
  })

  it('answers 400 for a password that is not a string', async () => {
    await expect(app().create({ password: 42 })).rejects.toMatchObject({
      name: 'BadRequest',
      message: "'password' must be a string"
    })
  })

  it("hashes another field, and uses the local strategy's bcrypt hasher by default", async () => {
    const { app: application, hasher } = await authTestApp({ local: { passwordField: 'pass' } })
    const created = await application.service('users').create({ email: 'e', pass: 'pw' }, REST)
    expect(created).toEqual({ email: 'e', id: 0 })
    expect(hasher.hashed).toBe(1)
    const stored = (await application.service('users').get(0)) as Record<string, unknown>
    expect(stored.pass).toBe('fake$pw')
  })

  it('says what is missing when there is no hasher', async () => {
    await expect(app(hashPassword()).create({ password: 'p' })).rejects.toThrow(/pass \{ hash \}/)
  })
})

describe('protect hook', () => {
  async function users(options = {}) {
    const application = new App()
    application.use('users', new AdapterService(new InMemoryStore(), { multi: true, ...options }))
    application.service('users').hooks({ after: { all: [protect('password', 'secret')] } })
    await application.service('users').create([
      { email: 'a', password: 'p', secret: 's' },
      { email: 'b', password: 'q' }
    ])
    return application
  }

  it('removes the fields for external calls: single, array, find page, multi patch/remove, $select', async () => {
    const application = await users()
    const service = application.service('users')
    await expect(service.get(0, REST)).resolves.toEqual({ email: 'a', id: 0 })
    await expect(service.find(REST)).resolves.toEqual([
      { email: 'a', id: 0 },
      { email: 'b', id: 1 }
    ])
    await expect(service.find({ ...REST, query: { $select: ['password'] } })).resolves.toEqual([{ id: 0 }, { id: 1 }])
    await expect(service.get(0, { ...REST, query: { $select: 'password' } })).resolves.toEqual({ id: 0 })
    await expect(service.patch(null, { x: 1 }, REST)).resolves.toEqual([
      { email: 'a', id: 0, x: 1 },
      { email: 'b', id: 1, x: 1 }
    ])
    await expect(service.create({ password: 'n' }, REST)).resolves.toEqual({ id: 2 })
    await expect(service.remove(null, REST)).resolves.toEqual([
      { email: 'a', id: 0, x: 1 },
      { email: 'b', id: 1, x: 1 },
      { id: 2 }
    ])
  })

  it('keeps paginated pages intact apart from the fields', async () => {
    const application = await users({ paginate: { default: 1 } })
    await expect(application.service('users').find(REST)).resolves.toEqual({
      total: 2,
      limit: 1,
      skip: 0,
      data: [{ email: 'a', id: 0 }]
    })
  })

  it('gives internal callers the fields in result while dispatch (what leaves the server) lacks them', async () => {
    const application = await users()
    await expect(application.service('users').get(0)).resolves.toEqual({
      email: 'a',
      password: 'p',
      secret: 's',
      id: 0
    })
    let dispatch: unknown
    application.service('users').hooks({
      after: {
        get: [
          (context: HookContext) => {
            dispatch = context.dispatch
          }
        ]
      }
    })
    await application.service('users').get(0)
    expect(dispatch).toEqual({ email: 'a', id: 0 })
  })

  it('strips the fields from service events, including those a live store publishes itself', async () => {
    const application = await users()
    const events: unknown[] = []
    application.service('users').on('created', (data) => events.push(data))
    await application.service('users').create({ email: 'c', password: 'r' })
    const live = new App()
    live.use('users', new AdapterService(new InMemoryStore({ watch: true })))
    live.service('users').hooks({ after: { all: [protect('password')] } })
    live.service('users').on('created', (data) => events.push(data))
    await live.setup()
    await live.service('users').create({ email: 'd', password: 's' })
    expect(events).toEqual([
      { email: 'c', id: 2 },
      { email: 'd', id: 0 }
    ])
    await live.teardown()
  })
})

describe('forbidQueryOn hook', () => {
  function service() {
    const application = new App()
    application.use('users', new AdapterService(new InMemoryStore()))
    application.service('users').hooks({ before: { all: [forbidQueryOn('password')] } })
    return application.service('users')
  }

  it('refuses external queries that filter or sort by the field, at any depth', async () => {
    for (const query of [
      { password: 'x' },
      { password: { $gt: '$2b' } },
      { $or: [{ a: 1 }, { password: 'x' }] },
      { $sort: { password: 1 } }
    ]) {
      await expect(service().find({ ...REST, query })).rejects.toMatchObject({
        name: 'BadRequest',
        message: "Querying by 'password' is not allowed"
      })
    }
  })

  it('allows $select of the field, other fields, and internal calls', async () => {
    await expect(service().find({ ...REST, query: { $select: ['password'], email: 'a' } })).resolves.toEqual([])
    await expect(service().find({ query: { password: 'x' } })).resolves.toEqual([])
  })
})
