import { afterAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import type { Sessions } from '../../src/application/sessions/sessions.js'
import type { SessionStore } from '../../src/domain/auth/session-store.js'
import { connect, emitAck } from '../interfaces/socketio/support.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { RETHINKDB_BIN, rethinkDbProcess } from '../support/rethinkdb-process.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'

/*
 * README "Sessions", throttling: only failures count. A burst of correct logins of one account (a
 * user with many tabs and devices, a service account) all succeed over real HTTP, on the memory store
 * and on RethinkDB; a burst of wrong ones is still cut off at the limit; stopping the server in the
 * middle of a burst fails no query (src/main.ts waits for calls in flight). The RethinkDB part needs
 * RETHINKDB_URL or RETHINKDB_BIN and is skipped with one loud line otherwise.
 */

const PASSWORD = 'password-1'
const ENV = { AUTH_SECRET, BCRYPT_ROUNDS: '4', LOGIN_MAX_FAILURES: '10' }
let stopRethinkDb: (() => Promise<void>) | undefined
afterAll(() => stopRethinkDb?.())

async function post(url: string, path: string, body: unknown) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

const login = (url: string, email: string, password = PASSWORD) =>
  post(url, '/authentication', { strategy: 'local', email, password })

/** Runs `test` on a fresh server, closed afterwards whatever happens. */
async function withServer(
  start: () => Promise<AuthServer>,
  test: (server: AuthServer) => Promise<void>
): Promise<void> {
  const server = await start()
  try {
    await test(server)
  } finally {
    await server.close()
  }
}

function burstSuite(start: () => Promise<AuthServer>) {
  it(
    '200 simultaneous correct logins of one account all succeed, each with a working refresh token',
    () =>
      withServer(start, async (server) => {
        await post(server.url, '/users', { email: 'burst@x.io', password: PASSWORD })
        const answers = await Promise.all(Array.from({ length: 200 }, () => login(server.url, 'burst@x.io')))
        expect(answers.filter((answer) => answer.status === 201)).toHaveLength(200)
        expect(new Set(answers.map((answer) => answer.body.refreshToken)).size).toBe(200)
        expect(
          (
            await post(server.url, '/authentication', {
              strategy: 'refresh',
              refreshToken: answers[199]!.body.refreshToken
            })
          ).status
        ).toBe(201)
        expect(server.warnings).toEqual([])
      }),
    60_000
  )

  it(
    '200 simultaneous wrong passwords: at most 10 are checked, the others answer 429, and the account is then locked',
    () =>
      withServer(start, async (server) => {
        await post(server.url, '/users', { email: 'guess@x.io', password: PASSWORD })
        const answers = await Promise.all(
          Array.from({ length: 200 }, () => login(server.url, 'guess@x.io', 'wrong-password'))
        )
        const codes = answers.map((answer) => answer.status)
        expect(codes.filter((code) => code === 401).length).toBeLessThanOrEqual(10)
        expect(codes.filter((code) => code !== 401).every((code) => code === 429)).toBe(true)
        expect((await login(server.url, 'guess@x.io')).status).toBe(429)
        expect(server.warnings).toEqual([])
      }),
    60_000
  )
}

/**
 * Starts `count` socket logins of one account and stops the server as src/main.ts does as soon as
 * all of them are running; answers the user's id and the sessions the logins left.
 */
async function stopDuringBurst(
  server: AuthServer,
  count: number
): Promise<{ userId: string | number; sessions: SessionStore }> {
  const sockets: Socket[] = []
  const { body: user } = await post(server.url, '/users', { email: 'stop@x.io', password: PASSWORD })
  let running = 0
  server.app.hooks({
    before: {
      create: [
        (context) => {
          if (context.path === 'authentication') running++
        }
      ]
    }
  })
  try {
    sockets.push(...(await Promise.all(Array.from({ length: count }, () => connect(server.url)))))
    for (const socket of sockets)
      void emitAck(
        socket,
        'create',
        'authentication',
        { strategy: 'local', email: 'stop@x.io', password: PASSWORD },
        {}
      )
    while (running < count) await new Promise((resolve) => setImmediate(resolve))
  } finally {
    await server.close()
    for (const socket of sockets) socket.disconnect()
  }
  return {
    userId: user.id as string | number,
    sessions: (server.app.service('authentication') as unknown as { sessions: Sessions }).sessions.store
  }
}

describe('a login burst on the memory store', () => {
  burstSuite(() => startAuthServer(ENV))

  it('a shutdown in the middle of a burst of socket logins lets every one of them end first', async () => {
    // bcrypt at cost 8: the burst takes longer than closing the server would.
    const { userId, sessions } = await stopDuringBurst(await startAuthServer({ ...ENV, BCRYPT_ROUNDS: '8' }), 20)
    // Each login that ran to its end saved the refresh token of its session.
    expect(await sessions.revokeUser(userId, Date.now())).toHaveLength(20)
  }, 60_000)
})

/** A RethinkDB for this suite: RETHINKDB_URL (a fresh database), else a server of our own from RETHINKDB_BIN. */
async function rethinkDb(): Promise<string | undefined> {
  if (process.env.RETHINKDB_URL) {
    const server = await discoverRethinkDb()
    stopRethinkDb = () => server!.stop()
    return `rethinkdb://${server!.host}:${server!.port}/${server!.db}`
  }
  if (!RETHINKDB_BIN) return undefined
  const server = await rethinkDbProcess('burst')
  stopRethinkDb = () => server.destroy()
  return `rethinkdb://127.0.0.1:${server.driverPort}/burst`
}

const rethinkDbUrl = await rethinkDb()
if (!rethinkDbUrl) process.stderr.write('\nRethinkDB login burst suite SKIPPED: set RETHINKDB_URL or RETHINKDB_BIN\n\n')
let tables = 0
;(rethinkDbUrl ? describe : describe.skip)('a login burst on RethinkDB', () => {
  // A database per test: each starts with no counters and no users.
  const start = () => startAuthServer({ ...ENV, STORE: 'rethinkdb', RETHINKDB_URL: `${rethinkDbUrl}_${++tables}` })
  burstSuite(start)

  it('a shutdown in the middle of a burst of socket logins fails no query (the pool closes after them)', async () => {
    const server = await start()
    await stopDuringBurst(server, 50)
    expect(server.warnings).toEqual([])
  }, 60_000)
})
