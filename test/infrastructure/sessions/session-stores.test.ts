import { afterAll, describe, expect, it } from '@jest/globals'
import type { LoginAttempts } from '../../../src/domain/auth/login-attempts.js'
import type { RefreshTokenRecord, SessionStore } from '../../../src/domain/auth/session-store.js'
import { Sessions } from '../../../src/application/authentication/sessions.js'
import { CryptoSecretTokens } from '../../../src/infrastructure/auth/crypto-secret-tokens.js'
import { FakeClock } from '../../support/fake-clock.js'
import { InMemoryLoginAttempts } from '../../../src/infrastructure/memory/in-memory-login-attempts.js'
import { InMemorySessionStore } from '../../../src/infrastructure/memory/in-memory-session-store.js'
import { RethinkDbLoginAttempts } from '../../../src/infrastructure/rethinkdb/rethinkdb-login-attempts.js'
import { RethinkDbSessionStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-session-store.js'
import { discoverRethinkDb, type RethinkDbTestServer } from '../../support/rethinkdb-server.js'

const NOW = Date.UTC(2026, 0, 1)
const record = (
  id: string,
  family: string,
  userId: string | number = 'u1',
  expiresAt = NOW + 1000
): RefreshTokenRecord => ({ id, family, userId, createdAt: NOW, expiresAt, usedAt: null, revokedAt: null })

/** The SessionStore contract, run on every adapter. */
function sessionStoreContract(make: () => SessionStore) {
  it('uses a refresh token once: rotated, then reused; unknown ids are unknown', async () => {
    const store = make()
    await store.saveRefreshToken(record('t1', 'f1'))
    expect(await store.useRefreshToken('t1', NOW)).toEqual({ outcome: 'rotated', record: record('t1', 'f1') })
    expect(await store.useRefreshToken('t1', NOW + 1)).toMatchObject({ outcome: 'reused', record: { usedAt: NOW } })
    expect(await store.useRefreshToken('nope', NOW)).toEqual({ outcome: 'unknown' })
  })

  it('lets exactly one of 20 simultaneous uses of one token rotate it', async () => {
    const store = make()
    await store.saveRefreshToken(record('race', 'f1'))
    const uses = await Promise.all(Array.from({ length: 20 }, () => store.useRefreshToken('race', NOW)))
    expect(uses.filter((use) => use.outcome === 'rotated')).toHaveLength(1)
    expect(uses.filter((use) => use.outcome === 'reused')).toHaveLength(19)
  })

  it("revokes a family, and all of a user's tokens (answering the live families)", async () => {
    const store = make()
    await store.saveRefreshToken(record('a1', 'fa'))
    await store.saveRefreshToken(record('a2', 'fa'))
    await store.saveRefreshToken(record('b1', 'fb'))
    await store.saveRefreshToken(record('c1', 'fc', 'u1', NOW - 1))
    await store.saveRefreshToken(record('d1', 'fd', 'u2'))
    await store.revokeFamily('fa', NOW)
    expect(await store.useRefreshToken('a2', NOW)).toMatchObject({ outcome: 'revoked', record: { revokedAt: NOW } })
    expect(await store.revokeUser('u1', NOW)).toEqual(['fb'])
    expect(await store.useRefreshToken('b1', NOW)).toMatchObject({ outcome: 'revoked' })
    expect(await store.useRefreshToken('d1', NOW)).toMatchObject({ outcome: 'rotated' })
  })

  it("revokes all of a user's tokens but one family (the session that changed the password)", async () => {
    const store = make()
    await store.saveRefreshToken(record('a1', 'fa'))
    await store.saveRefreshToken(record('b1', 'fb'))
    await store.saveRefreshToken(record('c1', 'fc'))
    expect((await store.revokeUser('u1', NOW, 'fb')).sort()).toEqual(['fa', 'fc'])
    expect(await store.useRefreshToken('a1', NOW)).toMatchObject({ outcome: 'revoked' })
    expect(await store.useRefreshToken('c1', NOW)).toMatchObject({ outcome: 'revoked' })
    expect(await store.useRefreshToken('b1', NOW)).toMatchObject({ outcome: 'rotated' })
  })

  it('pages the deny-list by cursor and drops expired entries', async () => {
    const store = make()
    const first = await store.revocationsSince(undefined)
    expect(first.revocations).toEqual([])
    await store.addRevocations(
      [
        { key: 'sid:a', expiresAt: NOW + 1000 },
        { key: 'jti:b', expiresAt: NOW + 10 }
      ],
      NOW
    )
    const second = await store.revocationsSince(first.cursor)
    expect(second.revocations.map((entry) => entry.key).sort()).toEqual(['jti:b', 'sid:a'])
    await store.addRevocations([{ key: 'sid:c', expiresAt: NOW + 1000 }], NOW + 100)
    const third = await store.revocationsSince(second.cursor)
    expect(third.revocations.map((entry) => entry.key)).toContain('sid:c')
    expect((await store.revocationsSince(undefined)).revocations.map((entry) => entry.key).sort()).toEqual([
      'sid:a',
      'sid:c'
    ])
  })

  it('purges expired refresh tokens', async () => {
    const store = make()
    await store.saveRefreshToken(record('old', 'f', 'u', NOW - 1))
    await store.saveRefreshToken(record('new', 'f', 'u', NOW + 1000))
    await store.purgeExpired(NOW)
    expect(await store.useRefreshToken('old', NOW)).toEqual({ outcome: 'unknown' })
    expect(await store.useRefreshToken('new', NOW)).toMatchObject({ outcome: 'rotated' })
  })

  it("carries a revocation from one process's Sessions to another's within one sync", async () => {
    const store = make()
    const clock = new FakeClock(NOW)
    const [a, b] = [0, 1].map(() => new Sessions(store, new CryptoSecretTokens(), clock))
    const payload = { sid: 'shared-session', jti: 'j1', exp: Math.floor(NOW / 1000) + 900 }
    await b!.check(payload)
    await a!.check(payload)
    await a!.logout(payload)
    expect(() => a!.check(payload)).toThrow('Session revoked') // at once where it happened
    expect(b!.check(payload)).toBeUndefined() // still within its 500 ms
    clock.advance(500)
    await expect(b!.check(payload)).rejects.toMatchObject({ message: 'Session revoked' })
  })
}

function loginAttemptsContract(make: () => LoginAttempts) {
  it('counts within a window, starts a new one after it, and resets', async () => {
    const attempts = make()
    expect(await attempts.get('account:a@x.io')).toBeUndefined()
    expect(await attempts.add('account:a@x.io', NOW, 1000)).toEqual({ count: 1, firstAt: NOW, lastAt: NOW })
    expect(await attempts.add('account:a@x.io', NOW + 10, 1000)).toEqual({ count: 2, firstAt: NOW, lastAt: NOW + 10 })
    expect(await attempts.add('account:a@x.io', NOW + 1000, 1000)).toEqual({
      count: 1,
      firstAt: NOW + 1000,
      lastAt: NOW + 1000
    })
    await attempts.reset('account:a@x.io')
    expect(await attempts.get('account:a@x.io')).toBeUndefined()
  })

  it('counts all of 30 simultaneous attempts', async () => {
    const attempts = make()
    const counts = await Promise.all(
      Array.from({ length: 30 }, () => attempts.add(`address:${'1'.repeat(200)}`, NOW, 60_000))
    )
    expect(counts.map((entry) => entry.count).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 30 }, (_, i) => i + 1)
    )
  })
}

describe('InMemorySessionStore', () => sessionStoreContract(() => new InMemorySessionStore()))
describe('InMemoryLoginAttempts', () => loginAttemptsContract(() => new InMemoryLoginAttempts()))

// Needs a real RethinkDB (RETHINKDB_URL, or Docker); skipped with the run's one loud line otherwise.
const server: RethinkDbTestServer | null = await discoverRethinkDb()
let tables = 0
afterAll(async () => {
  await server?.stop()
})

const withRethinkDb = server ? describe : describe.skip
withRethinkDb('RethinkDbSessionStore', () => {
  sessionStoreContract(() => {
    tables++
    return new RethinkDbSessionStore({
      r: server!.r,
      db: server!.db,
      refreshTable: `refresh_${tables}`,
      revocationTable: `revocations_${tables}`
    })
  })
})
withRethinkDb('RethinkDbLoginAttempts', () => {
  loginAttemptsContract(
    () => new RethinkDbLoginAttempts({ r: server!.r, db: server!.db, table: `attempts_${++tables}` })
  )
})
