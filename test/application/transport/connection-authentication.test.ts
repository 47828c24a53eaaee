import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals'
import { EventEmitter } from 'node:events'
import {
  ConnectionAuthentication,
  type RevocationClaims
} from '../../../src/application/transport/connection-authentication.js'
import { NotAuthenticated } from '../../../src/domain/errors/errors.js'
import type { Connection } from '../../../src/domain/service/service.js'

/** The logins of connections, their expiry and their revocation, without an app: the app's events and a deny-list. */
describe('ConnectionAuthentication', () => {
  const clock = { now: () => Date.now() }
  let events: EventEmitter
  let checked: RevocationClaims[]
  let revoked: Set<string>
  let revision: number
  let unreadable: boolean
  let auth: ConnectionAuthentication
  let loggedOut: Connection[]

  const login = (connection: Connection, payload: Record<string, unknown>) =>
    events.emit('login', { accessToken: `token-${String(payload.sid)}`, authentication: { payload } }, { connection })

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 })
    events = new EventEmitter()
    checked = []
    revoked = new Set()
    revision = 0
    unreadable = false
    loggedOut = []
    const sessions = {
      refresh: () => undefined,
      get revision() {
        return revision
      },
      check(claims: RevocationClaims) {
        checked.push(claims)
        if (unreadable) throw new Error('the session store cannot be read')
        if (revoked.has(claims.sid!)) throw new NotAuthenticated('Session revoked')
        return undefined
      }
    }
    auth = new ConnectionAuthentication(
      { events, available: () => true, call: async () => undefined, revocations: () => sessions },
      () => true,
      clock
    )
    events.on('logout', (_result: unknown, meta: { connection: Connection }) => loggedOut.push(meta.connection))
  })
  afterEach(() => {
    auth.detach()
    jest.useRealTimers()
  })

  it('checks logged-in connections again only when the deny-list gained a revocation', async () => {
    const [a, b]: Connection[] = [{ provider: 'socketio' }, { provider: 'socketio' }]
    login(a, { sid: 'a', jti: 'ja', exp: 2_000, extra: 'not kept' })
    login(b, { sid: 'b', exp: 2_000 })
    await jest.advanceTimersByTimeAsync(500)
    expect(checked).toEqual([
      { sid: 'a', jti: 'ja', expiresAt: 2_000_000 },
      { sid: 'b', expiresAt: 2_000_000 }
    ])
    await jest.advanceTimersByTimeAsync(5_000)
    expect(checked).toHaveLength(2)
    revoked.add('b')
    revision++
    await jest.advanceTimersByTimeAsync(500)
    expect(checked).toHaveLength(4)
    expect(loggedOut).toEqual([b])
    expect(a.authentication).toEqual({ strategy: 'jwt', accessToken: 'token-a' })
  })

  it('checks them again at the next sweep when the store could not be read, with no new revocation', async () => {
    const a: Connection = { provider: 'socketio' }
    login(a, { sid: 'a', exp: 2_000 })
    revoked.add('a')
    unreadable = true
    await jest.advanceTimersByTimeAsync(500)
    expect(loggedOut).toEqual([])
    unreadable = false
    await jest.advanceTimersByTimeAsync(500)
    expect(loggedOut).toEqual([a])
  })

  it("logs a connection out when its token's exp comes, once, and not after it logged out or in again", async () => {
    const [a, b, c]: Connection[] = [{ provider: 'socketio' }, { provider: 'socketio' }, { provider: 'socketio' }]
    login(a, { sid: 'a', exp: 1_002 })
    login(b, { sid: 'b', exp: 1_002 })
    login(c, { sid: 'c', exp: 1_001 })
    events.emit('logout', {}, { connection: b })
    login(c, { sid: 'c2', exp: 1_003 })
    await jest.advanceTimersByTimeAsync(1_999)
    expect(loggedOut).toEqual([b])
    await jest.advanceTimersByTimeAsync(1)
    expect(loggedOut).toEqual([b, a])
    expect(a).not.toHaveProperty('authentication')
    await jest.advanceTimersByTimeAsync(1_000)
    expect(loggedOut).toEqual([b, a, c])
    await jest.advanceTimersByTimeAsync(10_000)
    expect(loggedOut).toHaveLength(3)
  })
})
