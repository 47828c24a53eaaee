import type { SecretTokens } from '../domain/auth/secret-tokens.js'
import type { RefreshTokenRecord, SessionStore } from '../domain/auth/session-store.js'
import type { TokenPayload } from '../domain/auth/token-service.js'
import type { Clock } from '../domain/clock.js'
import { defineContract } from './contract.js'
import { SteppedClock } from './stepped-clock.js'

export interface SessionStoreContractOptions {
  /** A store of its own for each case: empty, and not seen by the other cases. */
  open(): SessionStore | Promise<SessionStore>
  /**
   * The sessions module's Sessions over a store (`(store, clock, tokens) => new Sessions(store, tokens, clock)`),
   * for the case that carries a revocation between two processes' Sessions; that case needs it.
   */
  sessions?(store: SessionStore, clock: Clock, tokens: SecretTokens): RevocationsOfSessions
}

/** What the carrying case uses of the sessions module's Sessions. */
export interface RevocationsOfSessions {
  check(payload: { sid?: unknown; jti?: unknown }): Promise<void> | undefined
  logout(payload: TokenPayload): Promise<void>
}

const NOW = Date.UTC(2026, 0, 1)
const record = (
  id: string,
  family: string,
  userId: string | number = 'u1',
  expiresAt = NOW + 1000
): RefreshTokenRecord => ({ id, family, userId, createdAt: NOW, expiresAt, usedAt: null, revokedAt: null })

/** Predictable stand-ins for the random tokens Sessions makes (the cases read none of them). */
class CountingSecretTokens implements SecretTokens {
  private count = 0

  generate(): string {
    return `token-${++this.count}`
  }

  id(): string {
    return `id-${++this.count}`
  }

  hash(token: string): string {
    return `hash-of-${token}`
  }

  successor(token: string): string {
    return `next-of-${token}`
  }
}

/**
 * The SessionStore contract: refresh tokens used once (also under 20 simultaneous uses), families and users revoked,
 * the deny-list paged by cursor, expired entries purged, and a revocation carried between processes' Sessions.
 */
export const runSessionStoreContract = defineContract<SessionStoreContractOptions>(
  'SessionStore',
  ({ test, expect }, options) => {
    test('uses a refresh token once: rotated, then reused; unknown ids are unknown', async () => {
      const store = await options.open()
      await store.saveRefreshToken(record('t1', 'f1'))
      expect(await store.useRefreshToken('t1', NOW)).toEqual({ outcome: 'rotated', record: record('t1', 'f1') })
      expect(await store.useRefreshToken('t1', NOW + 1)).toMatchObject({ outcome: 'reused', record: { usedAt: NOW } })
      expect(await store.useRefreshToken('nope', NOW)).toEqual({ outcome: 'unknown' })
    })

    test('keeps the first record of a token saved twice (a rotation retried saves its successor again)', async () => {
      const store = await options.open()
      await store.saveRefreshToken(record('twice', 'f1'))
      expect(await store.useRefreshToken('twice', NOW)).toMatchObject({ outcome: 'rotated' })
      await store.saveRefreshToken(record('twice', 'f1'))
      expect(await store.useRefreshToken('twice', NOW + 1)).toMatchObject({
        outcome: 'reused',
        record: { usedAt: NOW }
      })
    })

    test('lets exactly one of 20 simultaneous uses of one token rotate it', async () => {
      const store = await options.open()
      await store.saveRefreshToken(record('race', 'f1'))
      const uses = await Promise.all(Array.from({ length: 20 }, () => store.useRefreshToken('race', NOW)))
      expect(uses.filter((use) => use.outcome === 'rotated')).toHaveLength(1)
      expect(uses.filter((use) => use.outcome === 'reused')).toHaveLength(19)
    })

    test("revokes a family, and all of a user's tokens (answering the live families)", async () => {
      const store = await options.open()
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

    test("revokes all of a user's tokens but one family (the session that changed the password)", async () => {
      const store = await options.open()
      await store.saveRefreshToken(record('a1', 'fa'))
      await store.saveRefreshToken(record('b1', 'fb'))
      await store.saveRefreshToken(record('c1', 'fc'))
      expect((await store.revokeUser('u1', NOW, 'fb')).sort()).toEqual(['fa', 'fc'])
      expect(await store.useRefreshToken('a1', NOW)).toMatchObject({ outcome: 'revoked' })
      expect(await store.useRefreshToken('c1', NOW)).toMatchObject({ outcome: 'revoked' })
      expect(await store.useRefreshToken('b1', NOW)).toMatchObject({ outcome: 'rotated' })
    })

    test('pages the deny-list by cursor and drops expired entries', async () => {
      const store = await options.open()
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

    test('purges expired refresh tokens', async () => {
      const store = await options.open()
      await store.saveRefreshToken(record('old', 'f', 'u', NOW - 1))
      await store.saveRefreshToken(record('new', 'f', 'u', NOW + 1000))
      await store.purgeExpired(NOW)
      expect(await store.useRefreshToken('old', NOW)).toEqual({ outcome: 'unknown' })
      expect(await store.useRefreshToken('new', NOW)).toMatchObject({ outcome: 'rotated' })
    })

    test("carries a revocation from one process's Sessions to another's within one sync", async () => {
      const store = await options.open()
      const clock = new SteppedClock(NOW)
      if (!options.sessions) throw new Error('This case needs the `sessions` option (the sessions module)')
      const [a, b] = [0, 1].map(() => options.sessions!(store, clock, new CountingSecretTokens()))
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
)
