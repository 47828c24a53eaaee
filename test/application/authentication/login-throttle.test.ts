import { describe, expect, it } from '@jest/globals'
import type { Params } from '../../../src/domain/service/service.js'
import { InMemoryLoginAttempts } from '../../../src/infrastructure/memory/in-memory-login-attempts.js'
import { Unavailable } from '../../../src/domain/errors/errors.js'
import { FakeClock } from '../../support/fake-clock.js'
import { FakePasswordHasher } from '../../support/fake-password-hasher.js'
import { failure, sessionsApp } from '../../support/sessions-app.js'

const from = (address: string): Params => ({ provider: 'rest', address })

/** Resolves once `condition` holds, looking after each turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve))
}

/**
 * Each check takes a turn of the event loop (so many overlap), counts how many ran at once, and can fail as a database
 * would.
 */
class SlowHasher extends FakePasswordHasher {
  running = 0
  most = 0
  failing = false
  /** When set, checks wait for it. */
  gate?: Promise<void>

  override async verify(plain: string, hash: string): Promise<boolean> {
    this.most = Math.max(this.most, ++this.running)
    try {
      await new Promise((resolve) => setImmediate(resolve))
      await this.gate
      if (this.failing) throw new Unavailable('The database is unavailable, try again later')
      return await super.verify(plain, hash)
    } finally {
      this.running--
    }
  }
}

describe('login throttling', () => {
  it('doubles the wait after 3 failures of one account, answers 429 with retryAfter, and refuses without checking the password', async () => {
    const { signUp, login, clock } = await sessionsApp()
    await signUp('a@x.io')
    for (let i = 0; i < 3; i++) expect(await failure(login('a@x.io', 'wrong-pass'))).toMatchObject({ code: 401 })
    // The 4th attempt must wait 1 s — even with the right password (else the 429 would be an oracle).
    expect(await failure(login('a@x.io', 'password-1'))).toMatchObject({
      code: 429,
      name: 'TooManyRequests',
      data: { retryAfter: 1 }
    })
    clock.advance(1000)
    expect(await failure(login('a@x.io', 'wrong-pass'))).toMatchObject({ code: 401 })
    expect(await failure(login('a@x.io', 'wrong-pass'))).toMatchObject({ code: 429, data: { retryAfter: 2 } })
    clock.advance(2000)
    expect(await failure(login('a@x.io', 'wrong-pass'))).toMatchObject({ code: 401 })
    expect(await failure(login('a@x.io', 'wrong-pass'))).toMatchObject({ code: 429, data: { retryAfter: 4 } })
  })

  it('locks an account after 10 failures for the rest of the 15-minute window, from any address', async () => {
    const { signUp, login, clock } = await sessionsApp()
    await signUp('a@x.io')
    // Each attempt waits out the growing delay (the 9th one 64 s).
    for (let i = 0; i < 10; i++) {
      expect(await failure(login('a@x.io', 'wrong-pass', from(`10.0.1.${i}`)))).toMatchObject({ code: 401 })
      clock.advance(65_000)
    }
    // The window began with the first failure, 650 s ago: 250 s left.
    const locked = await failure(login('a@x.io', 'password-1', from('10.0.2.1')))
    expect(locked).toMatchObject({ code: 429, data: { retryAfter: 250 } })
    clock.advance(250_000)
    await expect(login('a@x.io', 'password-1', from('10.0.2.1'))).resolves.toMatchObject({
      accessToken: expect.any(String)
    })
  })

  it("a correct login resets the account's count", async () => {
    const { signUp, login, attempts } = await sessionsApp()
    await signUp('a@x.io')
    for (let i = 0; i < 2; i++) await failure(login('a@x.io', 'wrong-pass'))
    expect(await attempts.get('account:a@x.io')).toMatchObject({ count: 2 })
    await login('a@x.io', 'password-1')
    expect(await attempts.get('account:a@x.io')).toBeUndefined()
    for (let i = 0; i < 3; i++) expect(await failure(login('a@x.io', 'wrong-pass'))).toMatchObject({ code: 401 })
  })

  it('limits one address trying many accounts (without growing delay: people share addresses)', async () => {
    const { login } = await sessionsApp({ addressMaxFailures: 20 })
    for (let i = 0; i < 20; i++) {
      expect(await failure(login(`user${i}@x.io`, 'wrong-pass', from('10.9.9.9')))).toMatchObject({ code: 401 })
    }
    expect(await failure(login('fresh@x.io', 'wrong-pass', from('10.9.9.9')))).toMatchObject({ code: 429 })
    // Another address is not affected.
    expect(await failure(login('fresh@x.io', 'wrong-pass', from('10.9.9.8')))).toMatchObject({ code: 401 })
  })

  it('answers the same for an account that exists and one that does not', async () => {
    const { signUp, login } = await sessionsApp()
    await signUp('real@x.io')
    const answers = async (email: string, address: string) => {
      const seen = []
      for (let i = 0; i < 5; i++) {
        const { code, message, data } = await failure(login(email, 'wrong-pass', from(address)))
        seen.push({ code, message, data })
      }
      return seen
    }
    expect(await answers('real@x.io', '10.0.0.5')).toEqual(await answers('ghost@x.io', '10.0.0.6'))
  })

  it('counts the email case-insensitively (as uniqueness compares it)', async () => {
    const { signUp, login } = await sessionsApp()
    await signUp('a@x.io')
    for (const email of ['A@x.io', ' a@X.IO', 'a@x.io']) await failure(login(email, 'wrong-pass'))
    expect(await failure(login('a@x.io', 'password-1'))).toMatchObject({ code: 429 })
  })

  it('lets at most 10 of 200 simultaneous guesses check a password; the others are refused once the count is reached', async () => {
    const hasher = new SlowHasher()
    const { signUp, login, attempts } = await sessionsApp({ hasher })
    await signUp('a@x.io')
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => login('a@x.io', 'wrong-pass', from(`10.1.${i >> 8}.${i & 255}`)))
    )
    const codes = results.map((result) => (result as PromiseRejectedResult).reason.code as number)
    expect(hasher.verified.length).toBeLessThanOrEqual(10)
    expect(codes.filter((code) => code === 401)).toHaveLength(hasher.verified.length)
    expect(codes.filter((code) => code === 429)).toHaveLength(200 - hasher.verified.length)
    expect(await attempts.get('account:a@x.io')).toMatchObject({ count: hasher.verified.length })
  })

  it('reads the count again when a failure was counted while it was reading (a stale count takes no slot)', async () => {
    const hasher = new SlowHasher()
    const attempts = new InMemoryLoginAttempts()
    const { signUp, login } = await sessionsApp({ hasher, attempts, maxFailures: 2 })
    await signUp('a@x.io')
    let check!: () => void
    hasher.gate = new Promise<void>((resolve) => {
      check = resolve
    })
    const guesses = [
      failure(login('a@x.io', 'wrong-pass', from('10.2.0.1'))),
      failure(login('a@x.io', 'wrong-pass', from('10.2.0.2')))
    ]
    await until(() => hasher.running === 2)
    // A third attempt reads the count now, before those two failures are counted, and gets the answer after.
    let answer!: () => void
    const answered = new Promise<void>((resolve) => {
      answer = resolve
    })
    const get = attempts.get.bind(attempts)
    let reading = 0
    attempts.get = async (key) => {
      const record = await get(key)
      reading++
      await answered
      return record
    }
    const late = failure(login('a@x.io', 'wrong-pass', from('10.2.0.3')))
    await until(() => reading === 2)
    attempts.get = get
    check()
    expect((await Promise.all(guesses)).map((error) => error.code)).toEqual([401, 401])
    answer()
    expect(await late).toMatchObject({ code: 429 })
    expect(hasher.verified).toHaveLength(2)
  })

  it('lets 200 simultaneous correct logins of one account all succeed, at most 10 checked at once', async () => {
    const hasher = new SlowHasher()
    const { signUp, login, attempts } = await sessionsApp({ hasher })
    await signUp('a@x.io')
    const results = await Promise.allSettled(Array.from({ length: 200 }, () => login('a@x.io', 'password-1')))
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(200)
    expect(hasher.verified).toHaveLength(200)
    expect(hasher.most).toBeLessThanOrEqual(10)
    expect(hasher.most).toBeGreaterThan(1)
    expect(await attempts.get('account:a@x.io')).toBeUndefined()
    expect(await attempts.get('address:10.0.0.1')).toBeUndefined()
  })

  it('lets correct logins through while wrong ones of the same account are counted', async () => {
    const hasher = new SlowHasher()
    const { signUp, login } = await sessionsApp({ hasher })
    await signUp('a@x.io')
    // 2 wrong (free failures left), then correct ones: the burst stays under the limit and they all succeed.
    const wrong = Array.from({ length: 2 }, () => failure(login('a@x.io', 'wrong-pass')))
    const right = await Promise.allSettled(Array.from({ length: 30 }, () => login('a@x.io', 'password-1')))
    expect((await Promise.all(wrong)).map((error) => error.code)).toEqual([401, 401])
    expect(right.filter((result) => result.status === 'fulfilled')).toHaveLength(30)
  })

  it('refuses attempts beyond 1000 waiting for one account at once', async () => {
    const hasher = new SlowHasher()
    const { signUp, login } = await sessionsApp({ hasher })
    await signUp('a@x.io')
    const results = await Promise.allSettled(Array.from({ length: 1100 }, () => login('a@x.io', 'password-1')))
    const refused = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected')
    expect(refused).toHaveLength(90)
    expect(refused[0]!.reason).toMatchObject({
      code: 429,
      message: 'Too many logins at once; try again in 1 s',
      data: { retryAfter: 1 }
    })
  })

  it('counts nothing when the check fails for another reason than the password (database down: 503)', async () => {
    const hasher = new SlowHasher()
    const { signUp, login, attempts } = await sessionsApp({ hasher })
    await signUp('a@x.io')
    hasher.failing = true
    const results = await Promise.allSettled(Array.from({ length: 30 }, () => login('a@x.io', 'wrong-pass')))
    expect(results.map((result) => (result as PromiseRejectedResult).reason.code)).toEqual(Array(30).fill(503))
    expect(await attempts.get('account:a@x.io')).toBeUndefined()
    expect(await attempts.get('address:10.0.0.1')).toBeUndefined()
    hasher.failing = false
    await expect(login('a@x.io', 'password-1')).resolves.toMatchObject({ accessToken: expect.any(String) })
  })

  it('counts nothing and checks no password when the counters cannot be read', async () => {
    const hasher = new SlowHasher()
    const attempts = new InMemoryLoginAttempts()
    const { signUp, login } = await sessionsApp({ hasher, attempts })
    await signUp('a@x.io')
    const get = attempts.get.bind(attempts)
    attempts.get = () => Promise.reject(new Unavailable('The database is unavailable, try again later'))
    expect(await failure(login('a@x.io', 'password-1'))).toMatchObject({ code: 503 })
    expect(hasher.verified).toHaveLength(0)
    attempts.get = get
    await expect(login('a@x.io', 'password-1')).resolves.toMatchObject({ accessToken: expect.any(String) })
  })

  it('shares the count between instances through the store', async () => {
    const clock = new FakeClock()
    const attempts = new InMemoryLoginAttempts()
    const [a, b] = [await sessionsApp({ clock, attempts }), await sessionsApp({ clock, attempts })]
    for (let i = 0; i < 3; i++) await failure((i % 2 ? a : b).login('x@x.io', 'wrong-pass'))
    expect(await failure(a.login('x@x.io', 'wrong-pass'))).toMatchObject({ code: 429 })
    expect(await failure(b.login('x@x.io', 'wrong-pass'))).toMatchObject({ code: 429 })
  })

  it('does not throttle internal logins, refresh or jwt authentication', async () => {
    const { signUp, login, app, clock } = await sessionsApp({ maxFailures: 1 })
    await signUp('a@x.io')
    await failure(login('a@x.io', 'wrong-pass'))
    expect(await failure(login('a@x.io', 'password-1'))).toMatchObject({ code: 429 })
    await expect(
      app.service('authentication').create({ strategy: 'local', email: 'a@x.io', password: 'password-1' })
    ).resolves.toBeDefined()
    clock.advance(15 * 60_000)
    const { accessToken } = await login('a@x.io', 'password-1')
    for (let i = 0; i < 3; i++)
      await failure(app.service('authentication').create({ strategy: 'jwt', accessToken: 'bad' }, from('10.0.0.1')))
    await expect(
      app.service('authentication').create({ strategy: 'jwt', accessToken }, from('10.0.0.1'))
    ).resolves.toBeDefined()
  })
})
