import { describe, expect, it } from '@jest/globals'
import { InMemorySessionStore } from '../../../src/infrastructure/memory/in-memory-session-store.js'
import { InMemoryStoreFactory } from '../../../src/infrastructure/memory/in-memory-store-factory.js'
import type { Data } from '../../../src/domain/service/service.js'
import type { Store } from '../../../src/domain/store/store.js'
import type { StoreFactory } from '../../../src/domain/store/store-factory.js'
import { InMemoryUniqueKeys } from '../../../src/infrastructure/memory/in-memory-unique-keys.js'
import { FakeClock } from '../../support/fake-clock.js'
import { gravatar } from '../../support/gravatar.js'
import { failure, sessionsApp } from '../../support/sessions-app.js'

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE
/** Sessions' default reuse window (REFRESH_TOKEN_REUSE_WINDOW). */
const REUSE_WINDOW = 30_000

describe('sessions: login and refresh rotation', () => {
  it('answers a 15-minute access token carrying the session id and an opaque refresh token', async () => {
    const { signUp, login, tokens } = await sessionsApp()
    await signUp('a@x.io')
    const result = await login('a@x.io', 'password-1')
    const payload = await tokens.verify(result.accessToken)
    expect(Number(payload.exp) - Number(payload.iat)).toBe(15 * 60)
    expect(payload.sid).toEqual(expect.any(String))
    expect(result.refreshToken).toMatch(/^[\w-]{43}$/)
    expect(result.authentication.payload).toEqual(payload)
  })

  it('exchanges a refresh token for a new pair in the same session; the used one is dead', async () => {
    const { signUp, login, refresh, tokens, findUsers, clock } = await sessionsApp()
    const user = await signUp('a@x.io')
    const first = await login('a@x.io', 'password-1')
    const second = await refresh(first.refreshToken)
    expect(second.refreshToken).not.toBe(first.refreshToken)
    expect(second.accessToken).not.toBe(first.accessToken)
    expect(second.authentication.strategy).toBe('refresh')
    expect(second.user).toEqual({ id: user.id, email: 'a@x.io', avatar: gravatar('a@x.io') })
    expect((await tokens.verify(second.accessToken)).sid).toBe((await tokens.verify(first.accessToken)).sid)
    await expect(findUsers(second.accessToken)).resolves.toBeDefined()
    clock.advance(REUSE_WINDOW)
    expect(await failure(refresh(first.refreshToken))).toMatchObject({
      code: 401,
      message: 'Refresh token already used: the session has been revoked'
    })
  })

  it('answers a refresh retried within the reuse window (its answer was lost) with the same next refresh token', async () => {
    const { signUp, login, refresh, findUsers, clock } = await sessionsApp()
    await signUp('a@x.io')
    const first = await login('a@x.io', 'password-1')
    const lost = await refresh(first.refreshToken)
    clock.advance(REUSE_WINDOW - 1)
    const retried = await refresh(first.refreshToken)
    // The session goes on with one next token: not forked into two live ones.
    expect(retried.refreshToken).toBe(lost.refreshToken)
    expect(retried.accessToken).not.toBe(lost.accessToken)
    await expect(findUsers(retried.accessToken)).resolves.toBeDefined()
    const third = await refresh(retried.refreshToken)
    await expect(findUsers(third.accessToken)).resolves.toBeDefined()
    // Whoever holds the shared token and uses it after the window reveals a theft: the session is revoked.
    clock.advance(REUSE_WINDOW)
    expect(await failure(refresh(lost.refreshToken))).toMatchObject({
      code: 401,
      message: 'Refresh token already used: the session has been revoked'
    })
    expect(await failure(refresh(third.refreshToken))).toMatchObject({ code: 401, message: 'Refresh token revoked' })
  })

  it('with a reuse window of 0, revokes the session at the first reuse', async () => {
    const { signUp, login, refresh, findUsers, clock } = await sessionsApp({ reuseWindow: 0 })
    await signUp('a@x.io')
    const first = await login('a@x.io', 'password-1')
    const second = await refresh(first.refreshToken)
    clock.advance(1)
    expect(await failure(refresh(first.refreshToken))).toMatchObject({
      code: 401,
      message: 'Refresh token already used: the session has been revoked'
    })
    clock.advance(1000)
    expect(await failure(findUsers(second.accessToken))).toMatchObject({ code: 401, message: 'Session revoked' })
  })

  it('revokes the whole family when a dead refresh token is used again (a stolen token)', async () => {
    const { signUp, login, refresh, findUsers, clock } = await sessionsApp()
    await signUp('a@x.io')
    const first = await login('a@x.io', 'password-1')
    const second = await refresh(first.refreshToken) // the legitimate client rotates
    clock.advance(REUSE_WINDOW)
    await failure(refresh(first.refreshToken)) // the thief replays the old one, later
    // Everything descended from that login is dead: the newest refresh token and its access token.
    expect(await failure(refresh(second.refreshToken))).toMatchObject({ code: 401, message: 'Refresh token revoked' })
    expect(await failure(findUsers(second.accessToken))).toMatchObject({ code: 401, message: 'Session revoked' })
    expect(await failure(findUsers(first.accessToken))).toMatchObject({ code: 401 })
    // Another login of the same user is another family and unaffected.
    const other = await login('a@x.io', 'password-1')
    await expect(findUsers(other.accessToken)).resolves.toBeDefined()
  })

  it('answers several simultaneous uses of one refresh token the same next one: the session never forks', async () => {
    const { signUp, login, refresh } = await sessionsApp()
    await signUp('a@x.io')
    const { refreshToken } = await login('a@x.io', 'password-1')
    const results = await Promise.all(Array.from({ length: 5 }, () => refresh(refreshToken)))
    expect(new Set(results.map((result) => result.refreshToken)).size).toBe(1)
    // Without a window, exactly one wins (the store's use is atomic), and the others revoke the session.
    const strict = await sessionsApp({ reuseWindow: 0 })
    await strict.signUp('b@x.io')
    const session = await strict.login('b@x.io', 'password-1')
    const settled = await Promise.allSettled(Array.from({ length: 5 }, () => strict.refresh(session.refreshToken)))
    expect(settled.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
  })

  it('refuses unknown and missing refresh tokens', async () => {
    const { refresh, app } = await sessionsApp()
    expect(await failure(refresh('not-a-token'))).toMatchObject({ code: 401, message: 'Invalid refresh token' })
    expect(
      await failure(app.service('authentication').create({ strategy: 'refresh' }, { provider: 'rest' }))
    ).toMatchObject({ code: 401, message: 'No refresh token' })
  })

  it('lets access tokens expire after 15 minutes and refresh tokens after 30 days (fake clock)', async () => {
    const { signUp, login, refresh, findUsers, clock } = await sessionsApp()
    await signUp('a@x.io')
    const first = await login('a@x.io', 'password-1')
    clock.advance(15 * MINUTE)
    expect(await failure(findUsers(first.accessToken))).toMatchObject({ code: 401, message: 'jwt expired' })
    const second = await refresh(first.refreshToken)
    await expect(findUsers(second.accessToken)).resolves.toBeDefined()
    clock.advance(30 * DAY)
    expect(await failure(refresh(second.refreshToken))).toMatchObject({ code: 401, message: 'Refresh token expired' })
  })

  it("keeps a jwt re-authentication (the official clients' reAuthenticate) answering the same token and no refresh token", async () => {
    const { signUp, login, app } = await sessionsApp()
    await signUp('a@x.io')
    const { accessToken } = await login('a@x.io', 'password-1')
    const again = (await app
      .service('authentication')
      .create({ strategy: 'jwt', accessToken }, { provider: 'rest' })) as Record<string, unknown>
    expect(again.accessToken).toBe(accessToken)
    expect(again).not.toHaveProperty('refreshToken')
  })
})

describe('sessions: revocation', () => {
  it('logout revokes the session: its access token, its refresh token, but not other sessions', async () => {
    const { signUp, login, refresh, logout, findUsers } = await sessionsApp()
    await signUp('a@x.io')
    const session = await login('a@x.io', 'password-1')
    const other = await login('a@x.io', 'password-1')
    await logout(session.accessToken)
    expect(await failure(findUsers(session.accessToken))).toMatchObject({ code: 401, message: 'Session revoked' })
    expect(await failure(refresh(session.refreshToken))).toMatchObject({ code: 401, message: 'Refresh token revoked' })
    await expect(findUsers(other.accessToken)).resolves.toBeDefined()
  })

  it('keeps a deny-list entry only until the token would have expired', async () => {
    const { signUp, login, logout, store, clock } = await sessionsApp()
    await signUp('a@x.io')
    const session = await login('a@x.io', 'password-1')
    await logout(session.accessToken)
    expect((await store.revocationsSince(undefined)).revocations.map((entry) => entry.key).sort()).toEqual([
      expect.stringMatching(/^jti:/),
      expect.stringMatching(/^sid:/)
    ])
    clock.advance(15 * MINUTE + 1)
    await store.addRevocations([], clock.now())
    expect((await store.revocationsSince(undefined)).revocations).toEqual([])
  })

  it('a password change revokes every other session of that user and keeps the one that made it, not of others', async () => {
    const { signUp, login, refresh, findUsers, app, bearer } = await sessionsApp()
    const user = await signUp('a@x.io')
    await signUp('b@x.io')
    const [one, two, three, bob] = [
      await login('a@x.io', 'password-1'),
      await login('a@x.io', 'password-1'),
      await login('a@x.io', 'password-1'),
      await login('b@x.io', 'password-1')
    ]
    // A change of something else revokes nothing.
    await app.service('users').patch(user.id, { email: 'a2@x.io' }, bearer(two.accessToken))
    await expect(findUsers(two.accessToken)).resolves.toBeDefined()
    await app.service('users').patch(user.id, { password: 'password-2' }, bearer(one.accessToken))
    await expect(findUsers(one.accessToken)).resolves.toBeDefined()
    const renewed = await refresh(one.refreshToken)
    await expect(findUsers(renewed.accessToken)).resolves.toBeDefined()
    for (const session of [two, three]) {
      expect(await failure(findUsers(session.accessToken))).toMatchObject({ code: 401, message: 'Session revoked' })
      expect(await failure(refresh(session.refreshToken))).toMatchObject({
        code: 401,
        message: 'Refresh token revoked'
      })
    }
    await expect(findUsers(bob.accessToken)).resolves.toBeDefined()
    await expect(login('a2@x.io', 'password-2')).resolves.toMatchObject({ accessToken: expect.any(String) })
    // Changed by the server itself (no session of the user made it), or by update: the same rules.
    await app.service('users').patch(user.id, { password: 'password-3' })
    expect(await failure(findUsers(renewed.accessToken))).toMatchObject({ code: 401, message: 'Session revoked' })
    const four = await login('a2@x.io', 'password-3')
    const five = await login('a2@x.io', 'password-3')
    await app.service('users').update(user.id, { email: 'a2@x.io', password: 'password-4' }, bearer(four.accessToken))
    await expect(findUsers(four.accessToken)).resolves.toBeDefined()
    expect(await failure(findUsers(five.accessToken))).toMatchObject({ code: 401, message: 'Session revoked' })
  })

  it('deleting a user revokes their sessions (refresh included)', async () => {
    const { signUp, login, refresh, app, bearer } = await sessionsApp()
    const user = await signUp('a@x.io')
    const session = await login('a@x.io', 'password-1')
    await app.service('users').remove(user.id, bearer(session.accessToken))
    expect(await failure(refresh(session.refreshToken))).toMatchObject({ code: 401, message: 'Refresh token revoked' })
  })
})

describe('sessions: two instances on one store', () => {
  async function twoInstances() {
    const clock = new FakeClock()
    // One "database": both apps get the same collection per name.
    const memory = new InMemoryStoreFactory()
    const collections = new Map<string, Store<Data>>()
    const stores: StoreFactory = {
      create: <T extends Data>(name: string) => {
        if (!collections.has(name)) collections.set(name, memory.create(name))
        return collections.get(name) as unknown as Store<T>
      },
      close: () => memory.close(),
      health: () => memory.health()
    }
    const shared = { clock, store: new InMemorySessionStore(), stores, uniqueKeys: new InMemoryUniqueKeys() }
    return [await sessionsApp(shared), await sessionsApp(shared)] as const
  }

  it('sees a logout on the other instance within 1 s (the deny-list is re-read every 500 ms of the clock)', async () => {
    const [a, b] = await twoInstances()
    await a.signUp('a@x.io')
    const session = await a.login('a@x.io', 'password-1')
    await expect(b.findUsers(session.accessToken)).resolves.toBeDefined()
    await a.logout(session.accessToken)
    expect(await failure(a.findUsers(session.accessToken))).toMatchObject({ code: 401 })
    a.clock.advance(1000)
    expect(await failure(b.findUsers(session.accessToken))).toMatchObject({ code: 401, message: 'Session revoked' })
    // And the refresh token is dead for both.
    expect(await failure(b.refresh(session.refreshToken))).toMatchObject({
      code: 401,
      message: 'Refresh token revoked'
    })
  })

  it('sees a password change on the other instance within 1 s, though the user is in its entity cache', async () => {
    const [a, b] = await twoInstances()
    const user = await a.signUp('a@x.io')
    const [session, changer] = [await a.login('a@x.io', 'password-1'), await a.login('a@x.io', 'password-1')]
    await expect(b.findUsers(session.accessToken)).resolves.toBeDefined() // b caches the user now
    await a.app.service('users').patch(user.id, { password: 'password-2' }, a.bearer(changer.accessToken))
    a.clock.advance(1000)
    expect(await failure(b.findUsers(session.accessToken))).toMatchObject({ code: 401, message: 'Session revoked' })
    await expect(b.findUsers(changer.accessToken)).resolves.toBeDefined()
  })

  it('detects reuse across instances: a token rotated on one and replayed on the other revokes the family', async () => {
    const [a, b] = await twoInstances()
    await a.signUp('a@x.io')
    const first = await a.login('a@x.io', 'password-1')
    const second = await a.refresh(first.refreshToken)
    // Within the window, a retry on the other instance gets the same next token (they share the secret).
    expect((await b.refresh(first.refreshToken)).refreshToken).toBe(second.refreshToken)
    a.clock.advance(REUSE_WINDOW)
    await failure(b.refresh(first.refreshToken))
    expect(await failure(a.refresh(second.refreshToken))).toMatchObject({ code: 401, message: 'Refresh token revoked' })
    a.clock.advance(1000)
    expect(await failure(a.findUsers(second.accessToken))).toMatchObject({ code: 401, message: 'Session revoked' })
  })
})
