import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import authClientModule from '@feathersjs/authentication-client'
import { feathers } from '@feathersjs/feathers'
import restClientModule from '@feathersjs/rest-client'
import socketioClientModule from '@feathersjs/socketio-client'
import { io, type Socket } from 'socket.io-client'
import type { Connection } from '../../src/domain/service/service.js'
import { FakeClock } from '../support/fake-clock.js'
import { InMemoryLoginAttempts } from '../../src/infrastructure/memory/in-memory-login-attempts.js'
import { InMemorySessionStore } from '../../src/infrastructure/memory/in-memory-session-store.js'
import {
  authentication,
  SESSION_EXPIRED,
  type RefreshTimers
} from '../../src/interfaces/client/authentication/authentication-client.js'
import { createClient } from '../../src/interfaces/client/client-app.js'
import { socketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import { connect, disconnectAll } from '../interfaces/socketio/support.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { startTcpProxy } from '../support/tcp-proxy.js'

/*
 * README "Sessions" over the real composition root: REST, socket.io with our client refreshing in
 * place, the official Feathers clients, throttling with Retry-After, and two servers sharing one store.
 */

const restClient = restClientModule.default
const socketioClient = socketioClientModule.default
const authClient = authClientModule.default
type FeathersSocket = Parameters<typeof socketioClient>[0]

const PASSWORD = 'password-1'
const ENV = { AUTH_SECRET, BCRYPT_ROUNDS: '4' }
let server: AuthServer
let clock: FakeClock
const sockets: Socket[] = []

beforeAll(async () => {
  clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000)
  server = await startAuthServer(ENV, { clock })
  for (const email of ['rest@x.io', 'sock@x.io', 'watch@x.io', 'feathers@x.io']) await signUp(server.url, email)
})
afterEach(() => disconnectAll(server.app, sockets))
afterAll(() => server.close())

async function signUp(url: string, email: string): Promise<void> {
  await post(url, '/users', { email, password: PASSWORD })
}

async function post(url: string, path: string, body: unknown, token?: string) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body)
  })
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> }
}

async function call(url: string, method: string, path: string, token: string) {
  const response = await fetch(`${url}${path}`, { method, headers: { Authorization: `Bearer ${token}` } })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

const login = (url: string, email: string, password = PASSWORD) =>
  post(url, '/authentication', { strategy: 'local', email, password })
const refresh = (url: string, refreshToken: string) =>
  post(url, '/authentication', { strategy: 'refresh', refreshToken })

/** Timers the test fires by hand: the client's refresh without waiting 14 minutes. */
function manualTimers(): RefreshTimers & { pending: { callback: () => void; ms: number }[]; fire(): void } {
  const pending: { callback: () => void; ms: number }[] = []
  return {
    pending,
    now: () => clock.now(),
    setTimeout: (callback, ms) => {
      const timer = { callback, ms }
      pending.push(timer)
      return timer
    },
    clearTimeout: (handle) => {
      const index = pending.indexOf(handle as never)
      if (index >= 0) pending.splice(index, 1)
    },
    fire() {
      pending.shift()!.callback()
    }
  }
}

describe('sessions over REST', () => {
  it('rotates: login → refresh → refresh; a token replayed after the reuse window revokes the family (401 for all)', async () => {
    const first = await login(server.url, 'rest@x.io')
    expect(first.status).toBe(201)
    const second = await refresh(server.url, first.body.refreshToken)
    expect(second.status).toBe(201)
    expect(second.body).toMatchObject({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      authentication: { strategy: 'refresh' },
      user: { email: 'rest@x.io' }
    })
    expect((await call(server.url, 'GET', '/messages', second.body.accessToken)).status).toBe(200)
    // Within REFRESH_TOKEN_REUSE_WINDOW (30 s) a replay is taken for a retry: the same next token.
    const retry = await refresh(server.url, first.body.refreshToken)
    expect(retry).toMatchObject({ status: 201, body: { refreshToken: second.body.refreshToken } })
    clock.advance(30_000)
    const replay = await refresh(server.url, first.body.refreshToken)
    expect(replay).toMatchObject({
      status: 401,
      body: { name: 'NotAuthenticated', message: 'Refresh token already used: the session has been revoked' }
    })
    expect((await refresh(server.url, second.body.refreshToken)).status).toBe(401)
    expect((await call(server.url, 'GET', '/messages', second.body.accessToken)).body).toMatchObject({
      code: 401,
      message: 'Session revoked'
    })
  })

  it('logout (DELETE /authentication) revokes the access and the refresh token', async () => {
    const session = await login(server.url, 'rest@x.io')
    expect((await call(server.url, 'DELETE', '/authentication', session.body.accessToken)).status).toBe(200)
    expect((await call(server.url, 'GET', '/messages', session.body.accessToken)).status).toBe(401)
    expect((await refresh(server.url, session.body.refreshToken)).status).toBe(401)
  })

  it('an access token expires after 15 minutes by the server clock; the refresh token renews it', async () => {
    const session = await login(server.url, 'rest@x.io')
    clock.advance(15 * 60_000)
    expect((await call(server.url, 'GET', '/messages', session.body.accessToken)).body).toMatchObject({
      code: 401,
      message: 'jwt expired'
    })
    const renewed = await refresh(server.url, session.body.refreshToken)
    expect((await call(server.url, 'GET', '/messages', renewed.body.accessToken)).status).toBe(200)
  })
})

describe('login throttling over REST', () => {
  it('answers 429 with Retry-After per account, and per address across accounts', async () => {
    const throttled = await startAuthServer(
      { ...ENV, LOGIN_MAX_FAILURES: '10', LOGIN_MAX_FAILURES_PER_ADDRESS: '6' },
      { clock }
    )
    try {
      await signUp(throttled.url, 't@x.io')
      for (let i = 0; i < 3; i++) expect((await login(throttled.url, 't@x.io', 'wrong-password')).status).toBe(401)
      const refused = await login(throttled.url, 't@x.io')
      expect(refused.status).toBe(429)
      expect(refused.headers.get('retry-after')).toBe('1')
      expect(refused.body).toMatchObject({ name: 'TooManyRequests', data: { retryAfter: 1 } })
      clock.advance(1000)
      expect((await login(throttled.url, 't@x.io')).status).toBe(201)
      // The address (127.0.0.1) has 3 failures left of 6 — whichever accounts they name.
      for (const email of ['n1@x.io', 'n2@x.io', 'n3@x.io'])
        expect((await login(throttled.url, email, 'wrong-password')).status).toBe(401)
      const byAddress = await login(throttled.url, 'n4@x.io', 'wrong-password')
      expect(byAddress.status).toBe(429)
      expect(Number(byAddress.headers.get('retry-after'))).toBeGreaterThan(800)
    } finally {
      await throttled.close()
    }
  })
})

describe('a password change ends the other sessions and keeps the current one', () => {
  async function signedUp(email: string): Promise<string | number> {
    return (await post(server.url, '/users', { email, password: PASSWORD })).body.id as string | number
  }

  async function patch(id: string | number, body: unknown, token: string) {
    const response = await fetch(`${server.url}/users/${id}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify(body)
    })
    return { status: response.status, body: (await response.json()) as Record<string, any> }
  }

  it("over REST: the changer's next call and refresh succeed, another session of the user is 401", async () => {
    const id = await signedUp('change-rest@x.io')
    const [mine, other] = [await login(server.url, 'change-rest@x.io'), await login(server.url, 'change-rest@x.io')]
    expect((await patch(id, { password: 'password-2' }, mine.body.accessToken)).status).toBe(200)
    expect((await call(server.url, 'GET', '/messages', mine.body.accessToken)).status).toBe(200)
    const renewed = await refresh(server.url, mine.body.refreshToken)
    expect(renewed.status).toBe(201)
    expect((await call(server.url, 'GET', '/messages', renewed.body.accessToken)).status).toBe(200)
    expect((await call(server.url, 'GET', '/messages', other.body.accessToken)).body).toMatchObject({
      code: 401,
      message: 'Session revoked'
    })
    expect((await refresh(server.url, other.body.refreshToken)).body).toMatchObject({
      code: 401,
      message: 'Refresh token revoked'
    })
    expect((await login(server.url, 'change-rest@x.io', 'password-2')).status).toBe(201)
  })

  it('over socket.io: the socket stays logged in, its refresh token works, another session of the user is 401', async () => {
    const id = await signedUp('change-sock@x.io')
    const socket = await connect(server.url)
    sockets.push(socket)
    const client = createClient().configure(socketio(socket)).configure(authentication())
    await client.authenticate({ strategy: 'local', email: 'change-sock@x.io', password: PASSWORD })
    const other = await login(server.url, 'change-sock@x.io')
    await client.service('users').patch(id, { password: 'password-2' })
    await expect(client.service('messages').find()).resolves.toBeDefined()
    const refreshToken = await client.authentication.getRefreshToken()
    const renewed = await client.authenticate({ strategy: 'refresh', refreshToken })
    expect(renewed.accessToken).toEqual(expect.any(String))
    await expect(client.service('messages').find()).resolves.toBeDefined()
    expect(
      [...server.app.channel('authenticated').connections].some(
        (c: Connection) => c.authentication?.accessToken === renewed.accessToken
      )
    ).toBe(true)
    expect((await call(server.url, 'GET', '/messages', other.body.accessToken)).body).toMatchObject({
      code: 401,
      message: 'Session revoked'
    })
    expect((await refresh(server.url, other.body.refreshToken)).status).toBe(401)
  })
})

describe('sockets stay logged in', () => {
  it('refreshes in place before expiry: no disconnect, events before, during and after, new token on the connection', async () => {
    const timers = manualTimers()
    const socket = await connect(server.url)
    const watcherSocket = await connect(server.url)
    sockets.push(socket, watcherSocket)
    const client = createClient().configure(socketio(socket)).configure(authentication({ timers }))
    const watcher = createClient().configure(socketio(watcherSocket)).configure(authentication())
    const disconnects: unknown[] = []
    socket.on('disconnect', (reason) => disconnects.push(reason))
    const first = await client.authenticate({ strategy: 'local', email: 'sock@x.io', password: PASSWORD })
    await watcher.authenticate({ strategy: 'local', email: 'watch@x.io', password: PASSWORD })
    // Planned one minute before the 15-minute token expires.
    expect(timers.pending.map((timer) => timer.ms)).toEqual([14 * 60_000])

    const received: string[] = []
    client.service('messages').on('created', (message) => received.push((message as { text: string }).text))
    await watcher.service('messages').create({ text: 'before' })
    const refreshed = new Promise<{ accessToken: string }>((resolve) => client.once('login', resolve as never))
    clock.advance(14 * 60_000)
    timers.fire()
    await watcher.service('messages').create({ text: 'during' })
    const second = await refreshed
    await watcher.service('messages').create({ text: 'after' })
    // The old token would have expired now; the connection lives on with the new one.
    clock.advance(60_000)
    // (The watcher's own token has expired by now: this one is created on the server.)
    await server.app.service('messages').create({ text: 'later' })
    await expect(client.service('messages').find()).resolves.toBeDefined()
    await waitFor(() => received.length === 4)
    expect(received).toEqual(['before', 'during', 'after', 'later'])
    expect(second.accessToken).not.toBe(first.accessToken)
    expect(disconnects).toEqual([])
    const connection = [...server.app.channel('authenticated').connections].find(
      (c: Connection) => c.authentication?.accessToken === second.accessToken
    )
    expect(connection).toBeDefined()
    expect(timers.pending).toHaveLength(1)
  })

  it('drops to anonymous with a "session-expired" event when the refresh fails', async () => {
    const timers = manualTimers()
    const socket = await connect(server.url)
    sockets.push(socket)
    const client = createClient().configure(socketio(socket)).configure(authentication({ timers }))
    const result = await client.authenticate({ strategy: 'local', email: 'sock@x.io', password: PASSWORD })
    // Revoked elsewhere (another device reused the token, an admin, a password change): here by logout over REST.
    await call(server.url, 'DELETE', '/authentication', result.accessToken)
    const expired = new Promise((resolve) => client.once(SESSION_EXPIRED, resolve))
    timers.fire()
    expect(await expired).toMatchObject({ name: 'NotAuthenticated', message: 'Refresh token revoked' })
    expect(client.authentication.authenticated).toBe(false)
    expect(await client.authentication.getRefreshToken()).toBeNull()
    const connection = [...server.app.channel('anonymous').connections].find(
      (c: Connection) => c.authentication?.accessToken === undefined
    )
    expect(connection).toBeDefined()
    expect(
      [...server.app.channel('authenticated').connections].some(
        (c: Connection) => c.authentication?.accessToken === result.accessToken
      )
    ).toBe(false)
  })

  it('keeps the session when a refresh answer is lost: the retry after the reconnect gets the same next token', async () => {
    const proxy = await startTcpProxy('127.0.0.1', Number(new URL(server.url).port))
    const timers = manualTimers()
    const socket = io(`http://127.0.0.1:${proxy.port}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnectionDelay: 50
    })
    sockets.push(socket)
    const client = createClient()
      .configure(socketio(socket, { timeout: 2000 }))
      .configure(authentication({ timers }))
    try {
      await client.authenticate({ strategy: 'local', email: 'sock@x.io', password: PASSWORD })
      // The server rotates the refresh token, then the connection drops before its answer goes out.
      let cut = true
      const answered = afterRefreshes(async () => {
        if (cut) await proxy.cut()
        cut = false
      })
      const expired: unknown[] = []
      client.on(SESSION_EXPIRED, (error) => expired.push(error))
      clock.advance(14 * 60_000)
      timers.fire()
      await until(() => answered.length === 1)
      await proxy.restore()
      // Back on a new connection with the still valid access token, the client refreshes again (its timer is due).
      await until(() => timers.pending.length === 1 && client.authentication.authenticated)
      const refreshed = new Promise<{ refreshToken: string }>((resolve) => client.once('login', resolve as never))
      timers.fire()
      const { refreshToken: next } = (await Promise.race([
        refreshed,
        until(() => expired.length > 0).then(() => expired[0])
      ])) as { refreshToken: string }
      expect(expired).toEqual([])
      expect(answered).toHaveLength(2)
      expect(next).toBe(answered[0])
      expect(await client.authentication.getRefreshToken()).toBe(answered[0])
      // The session goes on: its next refresh works as any other.
      await expect(refresh(server.url, next)).resolves.toMatchObject({ status: 201 })
    } finally {
      await proxy.close()
    }
  })

  it('tries a refresh that timed out again 5 s later, and gets the next token the first attempt made', async () => {
    const timers = manualTimers()
    const socket = await connect(server.url)
    sockets.push(socket)
    const client = createClient()
      .configure(socketio(socket, { timeout: 200 }))
      .configure(authentication({ timers }))
    await client.authenticate({ strategy: 'local', email: 'sock@x.io', password: PASSWORD })
    // The server answers the first refresh after the client stopped waiting for it.
    let slow = true
    const answered = afterRefreshes(async () => {
      if (!slow) return
      slow = false
      await new Promise((resolve) => setTimeout(resolve, 400))
    })
    const expired: unknown[] = []
    client.on(SESSION_EXPIRED, (error) => expired.push(error))
    timers.fire()
    await until(() => timers.pending.length === 1)
    expect(timers.pending[0]!.ms).toBe(5_000)
    const refreshed = new Promise<{ refreshToken: string }>((resolve) => client.once('login', resolve as never))
    timers.fire()
    expect((await refreshed).refreshToken).toBe(answered[0])
    expect(expired).toEqual([])
    expect(client.authentication.authenticated).toBe(true)
  })

  it('re-authenticates a live connection as someone else and moves it between channels', async () => {
    const socket = await connect(server.url)
    sockets.push(socket)
    const client = createClient().configure(socketio(socket)).configure(authentication())
    await client.authenticate({ strategy: 'local', email: 'sock@x.io', password: PASSWORD })
    const again = await client.authenticate({ strategy: 'local', email: 'watch@x.io', password: PASSWORD })
    expect(again.user).toMatchObject({ email: 'watch@x.io' })
    const mine = [...server.app.channel('authenticated').connections].filter(
      (c: Connection) => c.authentication?.accessToken === again.accessToken
    )
    expect(mine).toHaveLength(1)
    expect(mine[0]!.user).toMatchObject({ email: 'watch@x.io' })
  })
})

describe('official Feathers clients', () => {
  it('rest-client + authentication-client: login, reAuthenticate, logout revokes the token they held', async () => {
    const storage = new authClientModule.MemoryStorage()
    const app = feathers().configure(restClient(server.url).fetch(fetch)).configure(authClient({ storage }))
    const result = await app.authenticate({ strategy: 'local', email: 'feathers@x.io', password: PASSWORD })
    expect(result.refreshToken).toEqual(expect.any(String))
    const again = await app.reAuthenticate(true)
    expect(again.accessToken).toBe(result.accessToken)
    await app.logout()
    expect((await call(server.url, 'GET', '/messages', result.accessToken)).status).toBe(401)
    // They can use the refresh strategy too, as any other.
    const next = await app.authenticate({ strategy: 'local', email: 'feathers@x.io', password: PASSWORD })
    const renewed = await app.authenticate({ strategy: 'refresh', refreshToken: next.refreshToken })
    expect(renewed.accessToken).not.toBe(next.accessToken)
    await expect(app.service('messages').find()).resolves.toBeDefined()
  })

  it('socketio-client: v3 logout revokes; create authentication with refresh re-authenticates the socket', async () => {
    const socket = await connect(server.url)
    sockets.push(socket)
    const app = feathers()
      .configure(socketioClient(socket as unknown as FeathersSocket))
      .configure(authClient({ storage: new authClientModule.MemoryStorage() }))
    const first = await app.authenticate({ strategy: 'local', email: 'feathers@x.io', password: PASSWORD })
    const renewed = await app.authenticate({ strategy: 'refresh', refreshToken: first.refreshToken })
    await expect(app.service('messages').find()).resolves.toBeDefined()
    const [error] = await new Promise<unknown[]>((resolve) =>
      socket.emit('logout', (...args: unknown[]) => resolve(args))
    )
    expect(error).toBeNull()
    expect((await call(server.url, 'GET', '/messages', renewed.accessToken)).status).toBe(401)
  })
})

describe('two servers on one session store', () => {
  it("a logout on one server logs the session's sockets on the other out within a second: no more private events", async () => {
    const shared = {
      clock: new FakeClock(),
      sessions: new InMemorySessionStore(),
      attempts: new InMemoryLoginAttempts()
    }
    const [a, b] = [await startAuthServer(ENV, shared), await startAuthServer(ENV, shared)]
    const opened: Socket[] = []
    try {
      await signUp(a.url, 'sweep@x.io')
      await signUp(b.url, 'sweep@x.io')
      const session = await login(a.url, 'sweep@x.io')
      const socket = await connect(b.url)
      opened.push(socket)
      const client = createClient().configure(socketio(socket)).configure(authentication())
      await client.authenticate({ strategy: 'jwt', accessToken: session.body.accessToken })
      const received: string[] = []
      client.service('messages').on('created', (message) => received.push((message as { text: string }).text))
      await b.app.service('messages').create({ text: 'while logged in' })
      await waitFor(() => received.length === 1)

      const connection = () =>
        [...b.app.channel('authenticated').connections].find(
          (c: Connection) => c.authentication?.accessToken === session.body.accessToken
        )
      expect(connection()).toBeDefined()
      expect((await call(a.url, 'DELETE', '/authentication', session.body.accessToken)).status).toBe(200)
      shared.clock.advance(1000)
      // Real time: the sweep runs every 500 ms; the deny-list is re-read once the clock moved 500 ms.
      const deadline = Date.now() + 1_500
      while (connection() !== undefined && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 25))
      expect(connection()).toBeUndefined()
      expect(b.app.channel('anonymous').length).toBe(1)
      await b.app.service('messages').create({ text: 'after the logout elsewhere' })
      // Logged in again, the socket gets the next message: one connection gets its events in order, so
      // the one before would have come first had it been sent.
      await client.authenticate({ strategy: 'local', email: 'sweep@x.io', password: PASSWORD })
      const next = new Promise((resolve) => client.service('messages').once('created', resolve))
      await b.app.service('messages').create({ text: 'after logging in again' })
      await next
      expect(received).toEqual(['while logged in', 'after logging in again'])
    } finally {
      for (const socket of opened) socket.disconnect()
      await a.close()
      await b.close()
    }
  })

  it('a logout on one is refused by the other within 1 s of its clock, the entity cache notwithstanding', async () => {
    const shared = {
      clock: new FakeClock(),
      sessions: new InMemorySessionStore(),
      attempts: new InMemoryLoginAttempts()
    }
    const [a, b] = [await startAuthServer(ENV, shared), await startAuthServer(ENV, shared)]
    try {
      // Each server has its own users store here: the same account is signed up on both.
      await signUp(a.url, 'two@x.io')
      await signUp(b.url, 'two@x.io')
      const session = await login(a.url, 'two@x.io')
      expect((await call(b.url, 'GET', '/messages', session.body.accessToken)).status).toBe(200)
      expect((await call(a.url, 'DELETE', '/authentication', session.body.accessToken)).status).toBe(200)
      shared.clock.advance(1000)
      expect((await call(b.url, 'GET', '/messages', session.body.accessToken)).body).toMatchObject({
        code: 401,
        message: 'Session revoked'
      })
      expect((await refresh(b.url, session.body.refreshToken)).status).toBe(401)
    } finally {
      await a.close()
      await b.close()
    }
  })
})

/** Resolves when `condition` holds, checking after each socket round trip (events arrive in order with answers). */
/**
 * Runs `then` after every refresh the server makes from now on, before its answer goes out; answers the refresh
 * tokens those refreshes issued, in order.
 */
function afterRefreshes(then: () => Promise<void>): string[] {
  const answered: string[] = []
  server.app.service('authentication').hooks({
    after: {
      create: [
        async (context: { data?: unknown; result?: unknown }) => {
          if ((context.data as { strategy?: string } | undefined)?.strategy !== 'refresh') return
          answered.push((context.result as { refreshToken: string }).refreshToken)
          await then()
        }
      ]
    }
  })
  return answered
}

/** Waits for `condition` in real time (a reconnect), failing after 5 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve))
}
