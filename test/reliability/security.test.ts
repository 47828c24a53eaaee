import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import jwt from 'jsonwebtoken'
import type { Socket } from 'socket.io-client'
import { AUTH_SECRET, type AuthServer } from '../support/auth-server.js'
import { gravatar } from '../support/gravatar.js'
import {
  call,
  connectSocket,
  request,
  signup,
  startReferenceServer,
  type Session
} from '../support/reference-server.js'

/*
 * End-to-end security properties of the reference app over REST and socket.io: bad tokens are 401,
 * password hashes never leave the server, bodies are bounded, `$search` cannot be made to backtrack,
 * and users change only what they own.
 */
let server: AuthServer
let alice: Session
let bob: Session
const sockets: Socket[] = []

beforeAll(async () => {
  server = await startReferenceServer()
  alice = await signup(server.url, 'alice@x.io', 'alice-password')
  bob = await signup(server.url, 'bob@x.io', 'bob-password')
})
afterAll(async () => {
  for (const socket of sockets) socket.disconnect()
  await server.close()
})

async function socketFor(token?: string): Promise<Socket> {
  const socket = await connectSocket(server.url, token)
  sockets.push(socket)
  return socket
}

describe('bad tokens are refused with 401 over REST and socket.io', () => {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const options = { audience: 'https://yourdomain.com', issuer: 'feathers' }
  const claims = () => ({ sub: String(alice.id), userId: alice.id })
  const tokens: [string, () => string][] = [
    [
      'alg none',
      () => `${part({ alg: 'none', typ: 'JWT' })}.${part({ ...claims(), aud: options.audience, iss: options.issuer })}.`
    ],
    [
      'tampered payload',
      () => {
        const [header, , signature] = bob.token.split('.')
        return `${header}.${part({ ...claims(), ...options, exp: 4102444800 })}.${signature}`
      }
    ],
    ['expired', () => jwt.sign({ ...claims(), exp: Math.floor(Date.now() / 1000) - 10 }, AUTH_SECRET, options)],
    ['wrong audience', () => jwt.sign(claims(), AUTH_SECRET, { ...options, audience: 'https://evil.example' })],
    ['another secret', () => jwt.sign(claims(), 'not-the-server-secret-at-all', options)]
  ]

  it.each(tokens)(
    '%s: REST header, REST re-authentication, socket authenticate and socket handshake',
    async (_name, make) => {
      const token = make()
      const find = await request(server.url, 'GET', '/messages', { token })
      expect(find.status).toBe(401)
      expect(find.body).toMatchObject({ name: 'NotAuthenticated', code: 401 })
      const reauth = await request(server.url, 'POST', '/authentication', {
        body: { strategy: 'jwt', accessToken: token }
      })
      expect(reauth.status).toBe(401)
      expect(reauth.text).not.toContain('stack')

      const socket = await socketFor()
      const [created] = await call(socket, 'create', 'authentication', { strategy: 'jwt', accessToken: token }, {})
      expect(created).toMatchObject({ name: 'NotAuthenticated', code: 401 })
      const [v3] = await call(socket, 'authenticate', { strategy: 'jwt', accessToken: token })
      expect(v3).toMatchObject({ code: 401 })
      const [afterwards] = await call(socket, 'find', 'messages', {})
      expect(afterwards).toMatchObject({ name: 'NotAuthenticated', code: 401 })
      await expect(connectSocket(server.url, token)).rejects.toThrow()
    }
  )
})

describe('the password never leaves the server', () => {
  // Error messages may name the field ("Querying by 'password'…"); a "password" key or a secret may not appear.
  const leaks = (text: string) => /"password"|\$2b\$|alice-password|carol-password|new-secret/.test(text)

  it('in REST answers of every users method and of the login, even with $select', async () => {
    const texts: string[] = []
    const record = async (method: string, path: string, options: Parameters<typeof request>[3] = {}) => {
      const answer = await request(server.url, method, path, options)
      expect(answer.status).toBeLessThan(500)
      texts.push(answer.text)
      return answer
    }
    const login = await record('POST', '/authentication', {
      body: { strategy: 'local', email: 'alice@x.io', password: 'alice-password' }
    })
    expect(login.status).toBe(201)
    await record('POST', '/authentication', { body: { strategy: 'jwt', accessToken: alice.token } })
    await record('POST', '/users', { body: { email: 'carol@x.io', password: 'carol-password' } })
    await record('GET', '/users', { token: alice.token })
    await record('GET', '/users?$select=password', { token: alice.token })
    await record('GET', '/users?$select[]=password&$select[]=email', { token: alice.token })
    await record('GET', `/users/${alice.id}`, { token: alice.token })
    await record('GET', `/users/${alice.id}?$select=password`, { token: alice.token })
    await record('PATCH', `/users/${alice.id}`, { token: alice.token, body: { password: 'new-secret' } })
    // A password change keeps the session that made it (README "Sessions"); she logs in with the new one anyway.
    alice.token = (
      (
        await record('POST', '/authentication', {
          body: { strategy: 'local', email: 'alice@x.io', password: 'new-secret' }
        })
      ).body as { accessToken: string }
    ).accessToken
    await record('PATCH', `/users/${alice.id}?$select=password`, { token: alice.token, body: { name: 'Alice' } })
    await record('PUT', `/users/${alice.id}`, {
      token: alice.token,
      body: { email: 'alice@x.io', password: 'alice-password' }
    })
    alice.token = (
      (
        await record('POST', '/authentication', {
          body: { strategy: 'local', email: 'alice@x.io', password: 'alice-password' }
        })
      ).body as { accessToken: string }
    ).accessToken
    await record('POST', '/users', { body: { id: alice.id, email: 'dup@x.io', password: 'alice-password' } })
    await record('GET', '/users?password=alice-password', { token: alice.token })
    const dave = await signup(server.url, 'dave@x.io')
    await record('DELETE', `/users/${dave.id}`, { token: dave.token })
    for (const text of texts) expect(leaks(text)).toBe(false)
  })

  it('in socket answers and in users events', async () => {
    const listener = await socketFor(alice.token)
    const events: string[] = []
    for (const event of ['created', 'updated', 'patched', 'removed'])
      listener.on(`users ${event}`, (data: unknown) => events.push(JSON.stringify(data)))
    const eve = await socketFor()
    const answers: unknown[] = []
    answers.push(await call(eve, 'create', 'users', { email: 'eve@x.io', password: 'eve-password' }, {}))
    const [, login] = (await call(
      eve,
      'create',
      'authentication',
      { strategy: 'local', email: 'eve@x.io', password: 'eve-password' },
      {}
    )) as [null, { user: { id: number } }]
    answers.push(login)
    const eveId = login.user.id
    answers.push(await call(eve, 'authenticate', { strategy: 'local', email: 'eve@x.io', password: 'eve-password' }))
    answers.push(await call(eve, 'find', 'users', { $select: ['password'] }))
    answers.push(await call(eve, 'get', 'users', eveId, { $select: ['password', 'email'] }))
    answers.push(await call(eve, 'patch', 'users', eveId, { password: 'eve-new-password' }, {}))
    // After each password change she logs in again on the same socket, with the new password.
    answers.push(
      await call(eve, 'authenticate', { strategy: 'local', email: 'eve@x.io', password: 'eve-new-password' })
    )
    answers.push(await call(eve, 'update', 'users', eveId, { email: 'eve@x.io', password: 'eve-password' }, {}))
    answers.push(await call(eve, 'authenticate', { strategy: 'local', email: 'eve@x.io', password: 'eve-password' }))
    const removed = new Promise((resolve) => listener.once('users removed', resolve))
    answers.push(await call(eve, 'remove', 'users', eveId, {}))
    await removed
    expect(events.length).toBe(4)
    for (const text of [...events, ...answers.map((answer) => JSON.stringify(answer))]) {
      expect(text).not.toMatch(/password|\$2b\$/)
    }
  })
})

describe('bounded input', () => {
  it('answers 413 with a JSON error for a JSON or urlencoded body over the limit, and keeps serving', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(200 * 1024) })
    const json = await request(server.url, 'POST', '/messages', { token: alice.token, body: big })
    expect(json.status).toBe(413)
    expect(json.body).toEqual({
      name: 'PayloadTooLarge',
      message: 'request entity too large',
      code: 413,
      className: 'payload-too-large',
      errors: {}
    })
    const form = await request(server.url, 'POST', '/users', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `email=${'x'.repeat(200 * 1024)}`
    })
    expect(form.status).toBe(413)
    expect((await request(server.url, 'GET', '/messages', { token: alice.token })).status).toBe(200)
  })

  it('$search with catastrophic-backtracking patterns runs in linear time (RE2) and answers correctly', async () => {
    const messages = server.app.service('messages')
    for (let index = 0; index < 300; index++) {
      await messages.create({ text: `${'a'.repeat(1999)}!`, kind: 'redos', n: index })
    }
    const page = async (pattern: string) => {
      const answer = await request(
        server.url,
        'GET',
        `/messages?kind=redos&$limit=0&text[$search]=${encodeURIComponent(pattern)}`,
        { token: alice.token }
      )
      expect(answer.status).toBe(200)
      return (answer.body as { total: number }).total
    }
    // With a backtracking engine each of these takes exponential time on 3,000 'a's followed by '!'.
    expect(await page('^(a+)+$')).toBe(0)
    expect(await page('(a|aa)+$')).toBe(0)
    expect(await page('(a|a?)+b')).toBe(0)
    expect(await page('(.*a){12}$')).toBe(0)
    expect(await page('^(a+)+!$')).toBe(300)
    const backreference = await request(server.url, 'GET', `/messages?text[$search]=${encodeURIComponent('(a)\\1')}`, {
      token: alice.token
    })
    expect(backreference.status).toBe(400)
    expect(backreference.body).toMatchObject({
      name: 'BadRequest',
      message: expect.stringContaining('Invalid $search pattern')
    })
    await messages.remove(null, { query: { kind: 'redos' } })
  })
})

describe('ownership: only the author changes a message, only a user changes themselves', () => {
  async function post(session: Session, text: string): Promise<number> {
    const answer = await request(server.url, 'POST', '/messages', { token: session.token, body: { text } })
    expect(answer.status).toBe(201)
    return (answer.body as { id: number }).id
  }

  it("REST: 403 for patch, update and remove of another author's message; the author can", async () => {
    const id = await post(alice, 'by alice')
    for (const [method, body] of [
      ['PATCH', { text: 'bob was here' }],
      ['PUT', { text: 'bob was here' }],
      ['DELETE', undefined]
    ] as const) {
      const answer = await request(server.url, method, `/messages/${id}`, { token: bob.token, body })
      expect(answer.status).toBe(403)
      expect(answer.body).toMatchObject({ name: 'Forbidden', code: 403, className: 'forbidden' })
    }
    expect(await server.app.service('messages').get(id)).toMatchObject({ text: 'by alice', userId: alice.id })
    // Handing the message over is refused: userId is server-owned.
    const handover = await request(server.url, 'PATCH', `/messages/${id}`, {
      token: alice.token,
      body: { text: 'edited', userId: bob.id }
    })
    expect(handover.status).toBe(400)
    expect(handover.body).toMatchObject({
      name: 'BadRequest',
      errors: { userId: "'userId' is set by the server and may not be sent" }
    })
    const patched = await request(server.url, 'PATCH', `/messages/${id}`, {
      token: alice.token,
      body: { text: 'edited' }
    })
    expect(patched.body).toEqual({
      id,
      text: 'edited',
      userId: alice.id,
      user: { id: alice.id, email: 'alice@x.io', avatar: gravatar('alice@x.io') },
      createdAt: expect.any(String),
      updatedAt: expect.any(String)
    })
    expect((await request(server.url, 'DELETE', `/messages/${id}`, { token: alice.token })).status).toBe(200)
  })

  it('REST: multi patch and remove by a non-owner touch only their own messages', async () => {
    const alices = [await post(alice, 'shared'), await post(alice, 'shared')]
    const bobs = await post(bob, 'shared')
    const patched = await request(server.url, 'PATCH', '/messages?text=shared', {
      token: bob.token,
      body: { seen: true }
    })
    expect(patched.body).toEqual([
      {
        id: bobs,
        text: 'shared',
        userId: bob.id,
        user: { id: bob.id, email: 'bob@x.io', avatar: gravatar('bob@x.io') },
        seen: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String)
      }
    ])
    const sneaky = await request(server.url, 'DELETE', `/messages?userId=${alice.id}`, { token: bob.token })
    expect(sneaky.body).toEqual([])
    const removed = await request(server.url, 'DELETE', '/messages?text=shared', { token: bob.token })
    expect(removed.body).toEqual([
      {
        id: bobs,
        text: 'shared',
        userId: bob.id,
        user: { id: bob.id, email: 'bob@x.io', avatar: gravatar('bob@x.io') },
        seen: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String)
      }
    ])
    for (const id of alices)
      expect(await server.app.service('messages').get(id)).toMatchObject({ text: 'shared', userId: alice.id })
  })

  it('socket.io: the same 403 and the same narrowing', async () => {
    const id = await post(alice, 'alice over socket')
    const socket = await socketFor(bob.token)
    const [patchError] = await call(socket, 'patch', 'messages', id, { text: 'x' }, {})
    expect(patchError).toMatchObject({ name: 'Forbidden', code: 403 })
    const [removeError] = await call(socket, 'remove', 'messages', id, {})
    expect(removeError).toMatchObject({ name: 'Forbidden', code: 403 })
    const [multiError, multi] = await call(socket, 'remove', 'messages', null, { userId: alice.id })
    expect(multiError).toBeNull()
    expect(multi).toEqual([])
    expect(await server.app.service('messages').get(id)).toMatchObject({ text: 'alice over socket' })
  })

  it('users: 403 for patch, update and remove of someone else; patching yourself works', async () => {
    for (const [method, body] of [
      ['PATCH', { name: 'pwned' }],
      ['PUT', { email: 'pwned@x.io', password: 'password-1' }],
      ['DELETE', undefined]
    ] as const) {
      const answer = await request(server.url, method, `/users/${alice.id}`, { token: bob.token, body })
      expect(answer.status).toBe(403)
      expect(answer.body).toMatchObject({ name: 'Forbidden', code: 403 })
    }
    expect(await server.app.service('users').get(alice.id)).toMatchObject({ email: 'alice@x.io' })
    const own = await request(server.url, 'PATCH', `/users/${bob.id}`, { token: bob.token, body: { name: 'Bob' } })
    expect(own.body).toEqual({ email: 'bob@x.io', name: 'Bob', id: bob.id, avatar: gravatar('bob@x.io') })
    const socket = await socketFor(bob.token)
    const [error] = await call(socket, 'remove', 'users', alice.id, {})
    expect(error).toMatchObject({ name: 'Forbidden', code: 403 })
  })
})
