import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { NotAuthenticated, Unavailable } from '../../../../src/domain/errors/errors.js'
import { authentication } from '../../../../src/interfaces/client/authentication/authentication-client.js'
import { MemoryStorage } from '../../../../src/interfaces/client/authentication/storage.js'
import { createClient } from '../../../../src/interfaces/client/client-app.js'
import { rest } from '../../../../src/interfaces/client/rest/rest-client.js'
import type { ServiceCall } from '../../../../src/domain/service/service.js'
import type { Transport } from '../../../../src/interfaces/client/transport.js'
import { startAuthServer, type AuthServer } from '../../../support/auth-server.js'
import { gravatar } from '../../../support/gravatar.js'

/** Answers logins with a token and records what each call carried. */
function fakeTransport(name: string, answer?: (call: ServiceCall) => unknown) {
  const calls: ServiceCall[] = []
  const transport: Transport = {
    name,
    async call(call) {
      calls.push(call)
      if (answer) return answer(call)
      if (call.path === 'authentication')
        return { accessToken: `token-${calls.length}`, authentication: { strategy: 'local' } }
      return []
    }
  }
  return { transport, calls }
}

describe('authentication client (fake transports)', () => {
  it('stores the token in the given storage and sends it as a Bearer header on REST calls, not on the login', async () => {
    const storage = new MemoryStorage()
    const { transport, calls } = fakeTransport('rest')
    const client = createClient()
      .configure((app) => {
        app.transport = transport
      })
      .configure(authentication({ storage }))
    const logins: unknown[] = []
    client.on('login', (result) => logins.push(result))
    await client.authenticate({ strategy: 'local', email: 'a', password: 'b' })
    await client.service('messages').find({ headers: { 'X-Extra': '1' } })
    expect(calls[0]!.params.headers).toBeUndefined()
    expect(calls[1]!.params.headers).toEqual({ Authorization: 'Bearer token-1', 'X-Extra': '1' })
    expect(storage.getItem('feathers-jwt')).toBe('token-1')
    expect(logins).toHaveLength(1)
  })

  it('uses the configured header, scheme, storage key and path; a localStorage-like async storage works', async () => {
    const items = new Map<string, string>()
    const storage = {
      getItem: async (key: string) => items.get(key) ?? null,
      setItem: async (key: string, value: string) => {
        items.set(key, value)
      },
      removeItem: async (key: string) => {
        items.delete(key)
      }
    }
    const { transport, calls } = fakeTransport('rest', (call) => (call.path === 'auth' ? { accessToken: 't' } : []))
    const client = createClient()
      .configure((app) => {
        app.transport = transport
      })
      .configure(authentication({ storage, storageKey: 'jwt', header: 'X-Token', scheme: 'JWT', path: '/auth/' }))
    await client.authenticate({ strategy: 'local' })
    await client.service('messages').find()
    expect(items.get('jwt')).toBe('t')
    expect(calls[1]!.params.headers).toEqual({ 'X-Token': 'JWT t' })
  })

  it('sends no header over a socket transport (the connection is authenticated) and re-authenticates after a disconnect', async () => {
    const { transport, calls } = fakeTransport('socketio')
    const client = createClient()
      .configure((app) => {
        app.transport = transport
      })
      .configure(authentication())
    await client.authenticate({ strategy: 'local', email: 'a', password: 'b' })
    await client.service('messages').find()
    expect(calls[1]!.params.headers).toBeUndefined()
    const relogin = new Promise((resolve) => client.once('login', resolve))
    client.emit('disconnect', 'transport close')
    await expect(relogin).resolves.toMatchObject({ accessToken: 'token-3' })
    expect(calls[2]).toMatchObject({
      path: 'authentication',
      method: 'create',
      data: { strategy: 'jwt', accessToken: 'token-1' }
    })
  })

  it('logs in again after a re-login cut off by a dropped connection; calls wait for the login that replaced it', async () => {
    let cutOff: (() => void) | undefined
    let failNext = false
    const { transport, calls } = fakeTransport('socketio', (call) => {
      if (call.path !== 'authentication') return []
      if (failNext) {
        failNext = false
        throw new Unavailable('the connection dropped')
      }
      // The first re-login is in flight when the connection drops again.
      if (calls.length === 2) return new Promise((_, reject) => (cutOff = () => reject(new Unavailable('dropped'))))
      return { accessToken: `token-${calls.length}` }
    })
    const client = createClient()
      .configure((app) => {
        app.transport = transport
      })
      .configure(authentication())
    await client.authenticate({ strategy: 'local', email: 'a', password: 'b' })
    client.emit('disconnect', 'transport close')
    await new Promise((resolve) => setTimeout(resolve, 10))
    const find = client.service('messages').find()
    const relogin = new Promise((resolve) => client.once('login', resolve))
    client.emit('disconnect', 'transport close')
    cutOff!()
    await expect(relogin).resolves.toMatchObject({ accessToken: 'token-3' })
    await find
    expect(calls.map((call) => call.path)).toEqual(['authentication', 'authentication', 'authentication', 'messages'])
    // A re-login that failed on its own (no reconnect replaced it) still leaves the client logging in on the next one.
    failNext = true
    client.emit('disconnect', 'transport close')
    await new Promise((resolve) => setTimeout(resolve, 10))
    const again = new Promise((resolve) => client.once('login', resolve))
    client.emit('disconnect', 'transport close')
    await expect(again).resolves.toMatchObject({ accessToken: 'token-6' })
  })

  it('drops the stored token when the server refuses it (401–407) and says when there is none', async () => {
    const storage = new MemoryStorage()
    storage.setItem('feathers-jwt', 'stale')
    const { transport } = fakeTransport('rest', () => {
      throw new NotAuthenticated('jwt expired')
    })
    const client = createClient()
      .configure((app) => {
        app.transport = transport
      })
      .configure(authentication({ storage }))
    await expect(client.reAuthenticate()).rejects.toThrow('jwt expired')
    expect(storage.getItem('feathers-jwt')).toBeNull()
    await expect(client.reAuthenticate()).rejects.toThrow('No accessToken found in storage')
  })

  it('keeps the token on other errors', async () => {
    const storage = new MemoryStorage()
    storage.setItem('feathers-jwt', 'kept')
    const { transport } = fakeTransport('rest', () => {
      throw new Error('network down')
    })
    const client = createClient()
      .configure((app) => {
        app.transport = transport
      })
      .configure(authentication({ storage }))
    await expect(client.reAuthenticate()).rejects.toThrow('network down')
    expect(storage.getItem('feathers-jwt')).toBe('kept')
  })

  it('makes calls wait for a login in progress', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const { transport, calls } = fakeTransport('rest', async (call) => {
      if (call.path === 'authentication') {
        await gate
        return { accessToken: 'late' }
      }
      return []
    })
    const client = createClient()
      .configure((app) => {
        app.transport = transport
      })
      .configure(authentication())
    const login = client.authenticate({ strategy: 'local' })
    const find = client.service('messages').find()
    release()
    await Promise.all([login, find])
    expect(calls.map((call) => call.path)).toEqual(['authentication', 'messages'])
    expect(calls[1]!.params.headers).toEqual({ Authorization: 'Bearer late' })
  })

  it('logs in again and sends a socket call once more when the connection lost its login (a re-login that failed)', async () => {
    // The server: logins answer, except the one right after the reconnect (timed out); calls need a logged-in socket.
    let loggedIn = false
    let failNextLogin = false
    const { transport, calls } = fakeTransport('socketio', (call) => {
      if (call.path === 'authentication') {
        if (failNextLogin) throw ((failNextLogin = false), new Unavailable('timed out'))
        loggedIn = true
        return { accessToken: `token-${calls.length}` }
      }
      if (!loggedIn) throw new NotAuthenticated('Not authenticated')
      return [{ id: 1 }]
    })
    const client = createClient()
      .configure((app) => {
        app.transport = transport
      })
      .configure(authentication())
    await client.authenticate({ strategy: 'local', email: 'a', password: 'b' })
    // A reconnect to an instance that does not know the socket: its re-login fails.
    loggedIn = false
    failNextLogin = true
    client.emit('disconnect', 'transport close')
    expect(await client.service('messages').find()).toEqual([{ id: 1 }])
    expect(calls.map((call) => `${call.path} ${call.method}`)).toEqual([
      'authentication create',
      'authentication create',
      'messages find',
      'authentication create',
      'messages find'
    ])
  })

  it('ends the session when the login after a refused socket call is refused too, and sends the call no more', async () => {
    let refuse = false
    const { transport, calls } = fakeTransport('socketio', (call) => {
      if (call.path === 'authentication') {
        if (refuse) throw new NotAuthenticated('jwt expired')
        return { accessToken: 'token' }
      }
      throw new NotAuthenticated('Not authenticated')
    })
    const storage = new MemoryStorage()
    const client = createClient()
      .configure((app) => {
        app.transport = transport
      })
      .configure(authentication({ storage }))
    await client.authenticate({ strategy: 'local', email: 'a', password: 'b' })
    refuse = true
    await expect(client.service('messages').find()).rejects.toThrow('jwt expired')
    expect(calls.map((call) => call.path)).toEqual(['authentication', 'messages', 'authentication'])
    expect(storage.getItem('feathers-jwt')).toBeNull()
    // Signed out now: a refused call is not retried.
    await expect(client.service('messages').find()).rejects.toThrow('Not authenticated')
    expect(calls).toHaveLength(4)
  })
})

describe('authentication client against the server over REST', () => {
  let server: AuthServer
  beforeAll(async () => {
    server = await startAuthServer()
    await fetch(`${server.url}/users`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'a@x.io', password: 'secret-pw' })
    })
  })
  afterAll(() => server.close())

  it('logs in, calls protected services, re-authenticates with the same token and logs out', async () => {
    const storage = new MemoryStorage()
    const client = createClient().configure(rest(server.url).fetch(fetch)).configure(authentication({ storage }))
    const events: string[] = []
    client.on('login', () => events.push('login'))
    client.on('logout', () => events.push('logout'))
    await expect(client.service('messages').find()).rejects.toMatchObject({
      name: 'NotAuthenticated',
      message: 'Not authenticated'
    })
    const result = await client.authenticate({ strategy: 'local', email: 'a@x.io', password: 'secret-pw' })
    expect(result.user).toEqual({ email: 'a@x.io', id: 0, avatar: gravatar('a@x.io') })
    await expect(client.service('messages').create({ text: 'hi' })).resolves.toEqual({
      text: 'hi',
      userId: 0,
      user: result.user,
      id: 0,
      createdAt: expect.any(String),
      updatedAt: expect.any(String)
    })
    const again = await client.reAuthenticate(true)
    expect(again.accessToken).toBe(result.accessToken)
    await expect(client.reAuthenticate()).resolves.toBe(again)
    await expect(client.logout()).resolves.toMatchObject({ accessToken: result.accessToken })
    expect(storage.getItem('feathers-jwt')).toBeNull()
    await expect(client.service('messages').find()).rejects.toMatchObject({ code: 401 })
    expect(events).toEqual(['login', 'login', 'logout'])
  })

  it('restores a session from storage with reAuthenticate (e.g. after a page reload)', async () => {
    const storage = new MemoryStorage()
    const first = createClient().configure(rest(server.url).fetch(fetch)).configure(authentication({ storage }))
    await first.authenticate({ strategy: 'local', email: 'a@x.io', password: 'secret-pw' })
    const second = createClient().configure(rest(server.url).fetch(fetch)).configure(authentication({ storage }))
    await second.reAuthenticate()
    await expect(second.service('users').get(0)).resolves.toEqual({
      email: 'a@x.io',
      id: 0,
      avatar: gravatar('a@x.io')
    })
  })

  it('rejects a wrong password with "Invalid login" and keeps no token', async () => {
    const storage = new MemoryStorage()
    const client = createClient().configure(rest(server.url).fetch(fetch)).configure(authentication({ storage }))
    await expect(client.authenticate({ strategy: 'local', email: 'a@x.io', password: 'nope' })).rejects.toMatchObject({
      name: 'NotAuthenticated',
      message: 'Invalid login'
    })
    expect(storage.getItem('feathers-jwt')).toBeNull()
  })
})
