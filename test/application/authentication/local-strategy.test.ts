import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { LocalStrategy } from '../../../src/application/authentication/local-strategy.js'
import { Verifier, type VerifyDone, type VerifyRequest } from '../../../src/application/authentication/verifier.js'
import { NotAuthenticated } from '../../../src/domain/errors/errors.js'
import { FakePasswordHasher } from '../../support/fake-password-hasher.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { App } from '../../../src/application/app.js'
import { authTestApp, REST } from '../../support/auth-test-app.js'

describe('local strategy options (each changed from its default)', () => {
  it('name, entity, service, usernameField and passwordField', async () => {
    const options = {
      name: 'password',
      entity: 'account',
      service: 'accounts',
      usernameField: 'username',
      passwordField: 'pass'
    }
    const { app, auth, tokens } = await authTestApp({
      service: 'accounts',
      local: options,
      jwt: { entity: 'account', service: 'accounts' },
      authStrategies: ['jwt', 'password']
    })
    await app.service('accounts').create({ username: 'ann', pass: 'pw', role: 'admin' })
    const result = await auth.create({ strategy: 'password', username: 'ann', pass: 'pw' }, REST)
    expect(result.account).toEqual({ username: 'ann', role: 'admin', id: 0 })
    expect(result.authentication.strategy).toBe('password')
    expect(await tokens.verify(result.accessToken!)).toMatchObject({ sub: '0', accountId: 0 })
    await expect(auth.create({ strategy: 'local', email: 'ann', password: 'pw' }, REST)).rejects.toThrow(
      'strategy not allowed'
    )
    await expect(auth.create({ strategy: 'password', email: 'ann', password: 'pw' }, REST)).rejects.toThrow(
      'Invalid login'
    )
    const again = await auth.create({ strategy: 'jwt', accessToken: result.accessToken }, REST)
    expect(again.account).toEqual({ username: 'ann', role: 'admin', id: 0 })
  })

  it('passReqToCallback true (default) hands the request to verify; false leaves it out', async () => {
    const calls: unknown[][] = []
    class Recording extends Verifier {
      override verify(...args: unknown[]): void {
        calls.push(args.slice(0, -1))
        ;(args[args.length - 1] as VerifyDone)(null, { id: 'x' }, {})
      }
    }
    const withReq = await authTestApp({ local: { Verifier: Recording } })
    await withReq.app.service('users').create({ id: 'x' })
    await withReq.auth.create({ strategy: 'local', email: 'e', password: 'p' }, { ...REST, query: { a: '1' } })
    const [req, username, password] = calls[0] as [VerifyRequest, string, string]
    expect([username, password]).toEqual(['e', 'p'])
    expect(req.body).toEqual({ strategy: 'local', email: 'e', password: 'p' })
    expect(req.query).toEqual({ a: '1' })
    expect(req.params.provider).toBe('rest')

    const withoutReq = await authTestApp({ local: { Verifier: Recording, passReqToCallback: false } })
    await withoutReq.app.service('users').create({ id: 'x' })
    await withoutReq.auth.create({ strategy: 'local', email: 'e', password: 'p' }, REST)
    expect(calls[1]).toEqual(['e', 'p'])
  })

  it('the built-in Verifier also works with passReqToCallback false', async () => {
    const { app, auth } = await authTestApp({ local: { passReqToCallback: false } })
    await app.service('users').create({ email: 'a@x.io', password: 'secret' })
    await expect(auth.create({ strategy: 'local', email: 'a@x.io', password: 'secret' }, REST)).resolves.toHaveProperty(
      'accessToken'
    )
    await expect(auth.create({ strategy: 'local', email: 'a@x.io', password: 'nope' }, REST)).rejects.toThrow(
      'Invalid login'
    )
  })

  it('session: true is refused with a message saying why', () => {
    expect(() => new LocalStrategy(new FakePasswordHasher(), { session: true })).toThrow(/does not support sessions/)
    expect(() => new LocalStrategy(new FakePasswordHasher(), { session: false })).not.toThrow()
  })

  it('a custom Verifier calling done(null, entity, payload) puts the payload into the token', async () => {
    class TeamVerifier extends Verifier {
      override verify(_req: VerifyRequest, username: string, password: string, done: VerifyDone): void {
        if (password !== 'team-pass') return done(null, false, { message: 'Invalid login' })
        done(null, { id: 7, email: username }, { team: 'blue', userId: 7 })
      }
    }
    const { app, auth, tokens } = await authTestApp({ local: { Verifier: TeamVerifier } })
    await app.service('users').create({ id: 7, email: 'seven@x.io', password: 'ignored' })
    const result = await auth.create({ strategy: 'local', email: 'seven@x.io', password: 'team-pass' }, REST)
    expect(await tokens.verify(result.accessToken!)).toMatchObject({ team: 'blue', userId: 7, sub: '7' })
    expect(result.authentication.payload).toMatchObject({ team: 'blue' })
    await expect(auth.create({ strategy: 'local', email: 'seven@x.io', password: 'x' }, REST)).rejects.toThrow(
      'Invalid login'
    )
  })

  it('a Verifier error other than a failed login reaches the caller as is', async () => {
    class Broken extends Verifier {
      override verify(_req: VerifyRequest, _u: string, _p: string, done: VerifyDone): void {
        done(new Error('lookup failed'))
      }
    }
    const { auth } = await authTestApp({ local: { Verifier: Broken } })
    await expect(auth.create({ strategy: 'local', email: 'e', password: 'p' }, REST)).rejects.toThrow('lookup failed')
  })
})

describe('Verifier', () => {
  function verifier(paginate = true) {
    const app = new App()
    app.use('users', new AdapterService(new InMemoryStore(), paginate ? { paginate: { default: 10 } } : {}))
    const hasher = new FakePasswordHasher()
    return {
      app,
      hasher,
      verifier: new Verifier(app, {
        entity: 'user',
        service: 'users',
        usernameField: 'email',
        passwordField: 'password',
        hasher
      })
    }
  }

  function verify(subject: Verifier, username: string, password: string) {
    return new Promise<unknown[]>((resolve) =>
      subject.verify({ body: {}, query: {}, headers: {}, params: {} }, username, password, (...args) => resolve(args))
    )
  }

  it('_normalizeResult takes the first entity of a page or an array and rejects when there is none', async () => {
    const { verifier: subject } = verifier()
    await expect(subject._normalizeResult({ total: 1, limit: 1, skip: 0, data: [{ id: 1 }] })).resolves.toEqual({
      id: 1
    })
    await expect(subject._normalizeResult([{ id: 2 }, { id: 3 }])).resolves.toEqual({ id: 2 })
    await expect(subject._normalizeResult([])).rejects.toBeInstanceOf(NotAuthenticated)
  })

  it('_comparePassword resolves with the entity for the right password and rejects otherwise', async () => {
    const { verifier: subject } = verifier()
    const entity = { id: 1, password: 'fake$pw' }
    await expect(subject._comparePassword(entity, 'pw')).resolves.toBe(entity)
    await expect(subject._comparePassword(entity, 'nope')).rejects.toThrow('Invalid login')
    await expect(subject._comparePassword({ id: 2 }, 'pw')).rejects.toThrow('Invalid login')
  })

  it('verify calls done(null, entity, { userId }) or done(null, false, { message }) on paginated and plain services', async () => {
    for (const paginate of [true, false]) {
      const { app, verifier: subject, hasher } = verifier(paginate)
      await app.service('users').create({ email: 'a@x.io', password: 'fake$pw' })
      expect(await verify(subject, 'a@x.io', 'pw')).toEqual([
        null,
        { email: 'a@x.io', password: 'fake$pw', id: 0 },
        { userId: 0 }
      ])
      expect(await verify(subject, 'a@x.io', 'bad')).toEqual([null, false, { message: 'Invalid login' }])
      expect(await verify(subject, 'b@x.io', 'pw')).toEqual([null, false, { message: 'Invalid login' }])
      expect(hasher.verified).toHaveLength(3)
    }
  })
})
