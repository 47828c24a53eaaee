import { afterAll, describe, expect, it } from '@jest/globals'
import type { RefreshTokenRecord } from '../../../src/domain/auth/session-store.js'
import { PostgresConnectionSessions } from '../../../src/infrastructure/postgres/postgres-connection-sessions.js'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresLoginAttempts } from '../../../src/infrastructure/postgres/postgres-login-attempts.js'
import { PostgresSessionStore } from '../../../src/infrastructure/postgres/postgres-session-store.js'
import { PostgresUniqueKeys } from '../../../src/infrastructure/postgres/postgres-unique-keys.js'
import { FakeClock } from '../../support/fake-clock.js'
import { silentLogger } from '../../../src/domain/logger.js'
import { Unavailable } from '../../../src/domain/errors/errors.js'
import { discoverPostgres } from '../../support/postgres-server.js'

// Unique keys, sessions, login counters and connection sessions on a real PostgreSQL, each adapter
// through two pools, as two instances of the app would use them.
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip
const pools: PostgresDatabase[] = []
const pool = () => {
  const db = new PostgresDatabase({ url: database!.url })
  pools.push(db)
  return db
}

afterAll(async () => {
  for (const db of pools) await db.close()
  await database?.stop()
})

const NOW = Date.UTC(2026, 0, 1)
const token = (
  id: string,
  family: string,
  userId: string | number = 'u1',
  expiresAt = NOW + 1000
): RefreshTokenRecord => ({
  id,
  family,
  userId,
  createdAt: NOW,
  expiresAt,
  usedAt: null,
  revokedAt: null
})

withServer('PostgreSQL ports beside the store', () => {
  it('lets exactly one of 50 simultaneous claims of one key win, across instances, and keeps holders', async () => {
    const [a, b] = [new PostgresUniqueKeys(pool()), new PostgresUniqueKeys(pool())]
    const claims = await Promise.all(
      Array.from({ length: 50 }, (_, n) => (n % 2 ? a : b).claim('users.email', 'x@y.io'))
    )
    expect(claims.filter(Boolean)).toHaveLength(1)
    expect(await a.holder('users.email', 'x@y.io')).toBeUndefined()
    await b.assign('users.email', 'x@y.io', 7)
    expect(await a.holder('users.email', 'x@y.io')).toBe(7)
    expect(await a.claim('teams.email', 'x@y.io')).toBe(true)
    const long = `${'l'.repeat(5000)}@long.io`
    expect(await a.claim('users.email', long)).toBe(true)
    expect(await b.claim('users.email', long)).toBe(false)
    await a.release('users.email', 'x@y.io')
    expect(await b.holder('users.email', 'x@y.io')).toBeUndefined()
    expect(await b.claim('users.email', 'x@y.io')).toBe(true)
  })

  it('rotates a refresh token once of 20 simultaneous uses on two instances, and revokes families and users', async () => {
    const [a, b] = [new PostgresSessionStore(pool()), new PostgresSessionStore(pool())]
    await a.saveRefreshToken(token('race', 'f1', 42))
    const uses = await Promise.all(Array.from({ length: 20 }, (_, n) => (n % 2 ? a : b).useRefreshToken('race', NOW)))
    expect(uses.filter((use) => use.outcome === 'rotated')).toEqual([
      { outcome: 'rotated', record: token('race', 'f1', 42) }
    ])
    expect(uses.filter((use) => use.outcome === 'reused')).toHaveLength(19)
    expect(await b.useRefreshToken('nope', NOW)).toEqual({ outcome: 'unknown' })
    await a.saveRefreshToken(token('a1', 'fa'))
    await a.saveRefreshToken(token('b1', 'fb'))
    await a.saveRefreshToken(token('c1', 'fc', 'u1', NOW - 1))
    await b.revokeFamily('fa', NOW)
    expect(await a.useRefreshToken('a1', NOW)).toMatchObject({ outcome: 'revoked', record: { revokedAt: NOW } })
    expect(await b.revokeUser('u1', NOW)).toEqual(['fb'])
    await a.purgeExpired(NOW)
    expect(await a.useRefreshToken('c1', NOW)).toEqual({ outcome: 'unknown' })
  })

  it('hands every revocation to every instance, also one committed late by a slower writer', async () => {
    const [a, b] = [new PostgresSessionStore(pool()), new PostgresSessionStore(pool())]
    const first = await b.revocationsSince(undefined)
    await a.addRevocations([{ key: 'sid:early', expiresAt: NOW + 60_000 }], NOW)
    // A writer whose transaction started before the reader's next read, and commits after it.
    const slow = pool()
    await a.setup()
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    let inserted!: () => void
    const written = new Promise<void>((resolve) => (inserted = resolve))
    const committed = slow.transaction('slow revocation', async (client) => {
      await client.query("INSERT INTO plumage_revocations (key, expires_at) VALUES ('sid:late', $1)", [NOW + 60_000])
      inserted()
      await gate
    })
    await written
    const second = await b.revocationsSince(first.cursor)
    expect(second.revocations.map((entry) => entry.key)).toEqual(['sid:early'])
    open()
    await committed
    const third = await b.revocationsSince(second.cursor)
    expect(third.revocations.map((entry) => entry.key)).toContain('sid:late')
    await a.addRevocations([], NOW + 120_000)
    expect((await b.revocationsSince(undefined)).revocations).toEqual([])
  })

  it('counts failed logins atomically across instances and starts a new window', async () => {
    const [a, b] = [new PostgresLoginAttempts(pool()), new PostgresLoginAttempts(pool())]
    await Promise.all(Array.from({ length: 30 }, (_, n) => (n % 2 ? a : b).add('ann@x.io', NOW + n, 60_000)))
    expect(await b.get('ann@x.io')).toEqual({ count: 30, firstAt: expect.any(Number), lastAt: expect.any(Number) })
    expect(await a.add('ann@x.io', NOW + 120_000, 60_000)).toEqual({
      count: 1,
      firstAt: NOW + 120_000,
      lastAt: NOW + 120_000
    })
    await b.reset('ann@x.io')
    expect(await a.get('ann@x.io')).toBeUndefined()
  })

  it('keeps connection sessions for the recovery window, with the login sealed under AUTH_SECRET', async () => {
    const clock = new FakeClock(NOW)
    const make = (secret: string) => new PostgresConnectionSessions({ db: pool(), clock, windowMs: 1000, secret })
    const [a, b, other] = [make('s'), make('s'), make('another secret')]
    const session = {
      id: 'private-pid',
      connectionId: 'sid-1',
      authentication: { strategy: 'jwt', accessToken: 'token' },
      authenticationOffset: 'e.1.2',
      disconnectedAt: NOW
    }
    await a.save(session)
    expect(await b.load('private-pid')).toEqual(session)
    expect(await other.load('private-pid')).toBeUndefined()
    const { rows } = await pool().query('read', 'SELECT * FROM plumage_connection_sessions')
    expect(JSON.stringify(rows)).not.toMatch(/private-pid|token/)
    clock.advance(1001)
    expect(await b.load('private-pid')).toBeUndefined()
    await a.save({ id: 'p2', connectionId: 'sid-2' })
    await b.remove('p2')
    expect(await a.load('p2')).toBeUndefined()
    for (const sessions of [a, b, other]) await sessions.close()
  })

  it('purges the sessions a silent (killed) instance held as connected once they expired, and its heartbeat', async () => {
    const clock = new FakeClock(NOW)
    const make = () => new PostgresConnectionSessions({ db: pool(), clock, windowMs: 1000, secret: 's' })
    const killed = make()
    await killed.save({ id: 'held', connectionId: 'held-a' })
    await killed.close()
    const holders = async () =>
      (await pool().query<{ id: string }>('read', 'SELECT id FROM plumage_connection_holders')).rows.map(({ id }) => id)
    const killedHolder = (
      await pool().query<{ holder: string }>(
        'read',
        "SELECT holder FROM plumage_connection_sessions WHERE connection_id = 'held-a'"
      )
    ).rows[0]!.holder
    expect(await holders()).toContain(killedHolder)
    clock.advance(60_000)
    const alive = make()
    await alive.save({ id: 'live', connectionId: 'live-b' })
    // The purge runs after the save answered (the test times out if it never comes).
    while ((await holders()).includes(killedHolder)) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await alive.load('held')).toBeUndefined()
    const { rows } = await pool().query<{ connection_id: string }>(
      'read',
      "SELECT connection_id FROM plumage_connection_sessions WHERE connection_id IN ('held-a', 'live-b')"
    )
    expect(rows).toEqual([{ connection_id: 'live-b' }])
    await alive.close()
  })

  it('stops at once on a refused connection, and waits for a server that is not up yet, never showing the password', async () => {
    const missing = new URL(database!.url)
    missing.pathname = '/no_such_database'
    missing.username = 'plumage'
    missing.password = 'hunter2'
    const refused = new PostgresDatabase({ url: missing.toString() })
    pools.push(refused)
    const error = await new PostgresUniqueKeys(refused).setup().then(
      () => undefined,
      (failure: Error) => failure
    )
    expect(error?.message).toMatch(
      /^PostgreSQL at postgres:\/\/plumage:\*\*\*@.* refused the connection: .*does not exist/
    )
    expect(error?.message).not.toContain('hunter2')

    const lines: string[] = []
    const logger = { ...silentLogger, warn: (message: string) => void lines.push(message) }
    const away = new PostgresDatabase({ url: 'postgres://app:hunter2@127.0.0.1:1/app', timeoutMs: 1200, logger })
    pools.push(away)
    await expect(new PostgresUniqueKeys(away).setup()).rejects.toBeInstanceOf(Unavailable)
    expect(lines[0]).toMatch(/^waiting for PostgreSQL at postgres:\/\/app:\*\*\*@127.0.0.1:1\/app \(up to 1 s\)$/)
    expect(lines.filter((line) => line.startsWith('waiting'))).toHaveLength(1)
    expect(lines.join('\n')).not.toContain('hunter2')
  })
})
