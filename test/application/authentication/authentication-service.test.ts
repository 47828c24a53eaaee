import { describe, expect, it } from '@jest/globals'
import type { AuthenticationResult } from '../../../src/application/authentication/authentication-strategy.js'
import type { HookContext } from '../../../src/application/hook-context.js'
import { NotAuthenticated } from '../../../src/domain/errors/errors.js'
import type { Params } from '../../../src/domain/service/service.js'
import { authTestApp, bearer, REST } from '../../support/auth-test-app.js'

async function failure(promise: Promise<unknown>): Promise<{ name: string; message: string; code: number }> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown
  )
  expect(error).toBeInstanceOf(NotAuthenticated)
  return error as { name: string; message: string; code: number }
}

async function withUser() {
  const setup = await authTestApp()
  const user = (await setup.app
    .service('users')
    .create({ email: 'a@x.io', password: 'secret', name: 'Alice' })) as Record<string, unknown>
  const login = (data: Record<string, unknown>, params: Params = REST) =>
    setup.auth.create({ strategy: 'local', ...data }, params)
  return { ...setup, user, login }
}

describe('authentication service: local login', () => {
  it('answers the v5 login object: a token whose sub is the id, the strategy, the payload and the user without password', async () => {
    const { login, tokens } = await withUser()
    const result = await login({ email: 'a@x.io', password: 'secret' })
    expect(Object.keys(result)).toEqual(['accessToken', 'authentication', 'user'])
    expect(result.user).toEqual({ email: 'a@x.io', name: 'Alice', id: 0 })
    expect(result.authentication).toEqual({ strategy: 'local', payload: await tokens.verify(result.accessToken!) })
    expect(result.authentication.payload).toMatchObject({
      sub: '0',
      userId: 0,
      aud: 'https://yourdomain.com',
      iss: 'feathers'
    })
  })

  it('gives the same "Invalid login" for an unknown user and a wrong password, comparing one hash each time', async () => {
    const { login, hasher } = await withUser()
    const before = hasher.verified.length
    const unknown = await failure(login({ email: 'nobody@x.io', password: 'secret' }))
    expect(hasher.verified.length).toBe(before + 1)
    const wrong = await failure(login({ email: 'a@x.io', password: 'wrong' }))
    expect(hasher.verified.length).toBe(before + 2)
    expect(unknown).toEqual(wrong)
    expect(JSON.stringify(unknown)).toBe(JSON.stringify(wrong))
    expect(unknown.message).toBe('Invalid login')
  })

  it('answers "Invalid login" when the username or password is missing, empty or not a string', async () => {
    const { login } = await withUser()
    for (const data of [
      {},
      { email: 'a@x.io' },
      { password: 'secret' },
      { email: '', password: 'secret' },
      { email: { $ne: '' }, password: 'secret' },
      { email: 'a@x.io', password: 42 }
    ]) {
      expect((await failure(login(data))).message).toBe('Invalid login')
    }
  })

  it('uses the strategies: missing, unknown and not allowed strategies are refused with the v5 messages', async () => {
    const { auth } = await withUser()
    expect((await failure(auth.create({ email: 'a@x.io', password: 'secret' }, REST))).message).toBe(
      'Invalid authentication information (no `strategy` set)'
    )
    expect((await failure(auth.create({}, REST))).message).toBe(
      'Invalid authentication information (no `strategy` set)'
    )
    expect((await failure(auth.create({ strategy: 'github' }, REST))).message).toBe(
      'Invalid authentication information (strategy not allowed in authStrategies)'
    )
    expect((await failure(auth.create({ strategy: 'jwt' }, REST))).message).toBe('No access token')
  })

  it('refuses strategies left out of authStrategies', async () => {
    const { app, auth } = await authTestApp({ authStrategies: ['jwt'] })
    await app.service('users').create({ email: 'a@x.io', password: 'secret' })
    expect((await failure(auth.create({ strategy: 'local', email: 'a@x.io', password: 'secret' }, REST))).message).toBe(
      'Invalid authentication information (strategy not allowed in authStrategies)'
    )
  })

  it('gives internal callers the entity as stored', async () => {
    const { login } = await withUser()
    const result = await login({ email: 'a@x.io', password: 'secret' }, {})
    expect(result.user).toEqual({ email: 'a@x.io', name: 'Alice', id: 0, password: 'fake$secret' })
  })
})

describe('authentication service: jwt re-authentication and logout', () => {
  it('returns the same token on jwt re-authentication', async () => {
    const { login, auth } = await withUser()
    const { accessToken } = await login({ email: 'a@x.io', password: 'secret' })
    const again = await auth.create({ strategy: 'jwt', accessToken }, REST)
    expect(again.accessToken).toBe(accessToken)
    expect(again.authentication).toEqual({
      strategy: 'jwt',
      accessToken,
      payload: expect.objectContaining({ sub: '0' })
    })
    expect(again.user).toEqual({ email: 'a@x.io', name: 'Alice', id: 0 })
  })

  it('logs out with the header token and answers like a re-authentication; the token stays valid', async () => {
    const { login, auth, app } = await withUser()
    const { accessToken } = await login({ email: 'a@x.io', password: 'secret' })
    const reauth = await auth.create({ strategy: 'jwt', accessToken: accessToken! }, REST)
    await expect(auth.remove(null, bearer(accessToken!))).resolves.toEqual(reauth)
    await expect(auth.remove(accessToken!, bearer(accessToken!))).resolves.toEqual(reauth)
    await expect(app.service('messages').find(bearer(accessToken!))).resolves.toEqual([])
  })

  it('refuses logout with another id, an id without a header, and no header at all', async () => {
    const { login, auth } = await withUser()
    const { accessToken } = await login({ email: 'a@x.io', password: 'secret' })
    expect((await failure(auth.remove('other', bearer(accessToken!)))).message).toBe('Invalid access token')
    expect((await failure(auth.remove(accessToken!, REST))).message).toBe('Invalid access token')
    expect((await failure(auth.remove(null, REST))).message).toBe(
      'Invalid authentication information (no `strategy` set)'
    )
  })

  it('emits login and logout app events with provider and connection, and never publishes service events', async () => {
    const { login, auth, app } = await withUser()
    const seen: unknown[][] = []
    app.on('login', (...args: unknown[]) => seen.push(['login', ...args]))
    app.on('logout', (...args: unknown[]) => seen.push(['logout', ...args]))
    const serviceEvents: unknown[] = []
    for (const event of ['created', 'removed'])
      app.service('authentication').on(event, (data) => serviceEvents.push(data))
    const connection = { provider: 'socketio' }
    const result = await login({ email: 'a@x.io', password: 'secret' }, { provider: 'socketio', connection })
    await auth.remove(null, {
      provider: 'socketio',
      connection,
      authentication: { strategy: 'jwt', accessToken: result.accessToken }
    })
    expect(
      seen.map(([name, authResult, meta]) => [name, (authResult as AuthenticationResult).accessToken, meta])
    ).toEqual([
      ['login', result.accessToken, { provider: 'socketio', connection }],
      ['logout', result.accessToken, { provider: 'socketio', connection }]
    ])
    expect((seen[0]![3] as HookContext).method).toBe('create')
    expect(serviceEvents).toEqual([])
  })
})

describe('jwt strategy', () => {
  it('refuses an expired token (fake clock) with "jwt expired"', async () => {
    const { login, app, clock } = await withUser()
    const { accessToken } = await login({ email: 'a@x.io', password: 'secret' })
    clock.advance(24 * 3600 * 1000 + 1000)
    expect((await failure(app.service('messages').find(bearer(accessToken!)))).message).toBe('jwt expired')
  })

  it('refuses a valid token whose user was removed through the service with 401, at once', async () => {
    const { login, app } = await withUser()
    const { accessToken } = await login({ email: 'a@x.io', password: 'secret' })
    await app.service('messages').find(bearer(accessToken!))
    await app.service('users').remove(0)
    const error = await failure(app.service('messages').find(bearer(accessToken!)))
    expect(error.code).toBe(401)
  })

  it('sees changes made behind the service after at most the cache lifetime', async () => {
    const { login, app, clock } = await withUser()
    const { accessToken } = await login({ email: 'a@x.io', password: 'secret' })
    await app.service('messages').find(bearer(accessToken!))
    const store = (
      app.service('users') as unknown as { store: { remove(id: number, query: object): Promise<unknown> } }
    ).store
    await store.remove(0, { filter: { op: 'and', filters: [] }, sort: [], skip: 0 })
    await expect(app.service('messages').find(bearer(accessToken!))).resolves.toEqual([])
    clock.advance(2001)
    expect((await failure(app.service('messages').find(bearer(accessToken!)))).code).toBe(401)
  })

  it('sees a patched user at once through the cache', async () => {
    const { login, app } = await withUser()
    const { accessToken } = await login({ email: 'a@x.io', password: 'secret' })
    let user: unknown
    app.service('messages').hooks({
      before: {
        find: [
          (context: HookContext) => {
            user = context.params.user
          }
        ]
      }
    })
    await app.service('messages').find(bearer(accessToken!))
    expect(user).toMatchObject({ name: 'Alice' })
    await app.service('users').patch(0, { name: 'Alicia' })
    await app.service('messages').find(bearer(accessToken!))
    expect(user).toMatchObject({ name: 'Alicia' })
  })

  it('loads the user once for concurrent calls, and again after a change evicts the load in flight', async () => {
    const { login, app, clock } = await withUser()
    const { accessToken } = await login({ email: 'a@x.io', password: 'secret' })
    const gets: (() => void)[] = []
    let hold = false
    app.service('users').hooks({
      before: {
        get: [
          async () => {
            gets.push(() => undefined)
            if (hold) await new Promise<void>((resolve) => (gets[gets.length - 1] = resolve))
          }
        ]
      }
    })
    clock.advance(2001)
    let names: unknown[] = []
    app
      .service('messages')
      .hooks({ before: { find: [(context: HookContext) => void names.push(context.params.user)] } })
    await Promise.all(Array.from({ length: 5 }, () => app.service('messages').find(bearer(accessToken!))))
    expect(gets).toHaveLength(1)
    clock.advance(2001)
    hold = true
    const stale = app.service('messages').find(bearer(accessToken!))
    await new Promise((resolve) => setImmediate(resolve))
    expect(gets).toHaveLength(2)
    hold = false
    await app.service('users').patch(0, { name: 'Alicia' })
    names = []
    await app.service('messages').find(bearer(accessToken!))
    expect(gets).toHaveLength(3)
    expect(names).toEqual([expect.objectContaining({ name: 'Alicia' })])
    gets[1]!()
    await stale
    names = []
    await app.service('messages').find(bearer(accessToken!))
    expect(gets).toHaveLength(3)
    expect(names).toEqual([expect.objectContaining({ name: 'Alicia' })])
  })

  it('can run without the cache', async () => {
    const { app, auth } = await authTestApp({ jwt: { entityCacheTtl: 0 } })
    await app.service('users').create({ email: 'a@x.io', password: 'secret' })
    const { accessToken } = await auth.create({ strategy: 'local', email: 'a@x.io', password: 'secret' }, REST)
    const store = (
      app.service('users') as unknown as { store: { remove(id: number, query: object): Promise<unknown> } }
    ).store
    await app.service('messages').find(bearer(accessToken!))
    await store.remove(0, { filter: { op: 'and', filters: [] }, sort: [], skip: 0 })
    expect((await failure(app.service('messages').find(bearer(accessToken!)))).code).toBe(401)
  })

  it('finds the user of a v3-style token that carries only userId', async () => {
    const { tokens, app } = await withUser()
    const token = await tokens.sign({ userId: 0 })
    await expect(app.service('messages').find(bearer(token))).resolves.toEqual([])
    const anonymous = await tokens.sign({}, { subject: 'anonymous' })
    expect((await failure(app.service('messages').find(bearer(anonymous)))).code).toBe(401)
  })

  it('refuses a malformed token with "jwt malformed"', async () => {
    const { app } = await withUser()
    expect((await failure(app.service('messages').find(bearer('Bearer')))).message).toBe('jwt malformed')
  })
})
