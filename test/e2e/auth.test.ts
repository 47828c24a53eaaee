import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import jwt from 'jsonwebtoken'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { gravatar } from '../support/gravatar.js'

let server: AuthServer

beforeAll(async () => {
  server = await startAuthServer()
})
afterAll(() => server.close())

async function http(
  method: string,
  path: string,
  { body, token, headers = {} }: { body?: unknown; token?: string; headers?: Record<string, string> } = {}
) {
  const response = await fetch(server.url + path, {
    method,
    headers: {
      Accept: 'application/json',
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...headers
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined, text }
}

const login = (email: string, password: string) =>
  http('POST', '/authentication', { body: { strategy: 'local', email, password } })

function unauthorized(message: string, data?: Record<string, unknown>) {
  return {
    name: 'NotAuthenticated',
    message,
    code: 401,
    className: 'not-authenticated',
    ...(data ? { data } : {}),
    errors: {}
  }
}

let alice: { token: string; id: number }

beforeAll(async () => {
  const signup = await http('POST', '/users', { body: { email: 'alice@x.io', password: 'secret-pw', name: 'Alice' } })
  expect(signup.status).toBe(201)
  const { body } = await login('alice@x.io', 'secret-pw')
  alice = { token: body!.accessToken as string, id: signup.body!.id as number }
})

describe('signup and login over REST (reference app)', () => {
  // That no answer or event carries the password: test/reliability/security.test.ts, "the password never leaves the
  // server".
  it('signs up without a token: 201 with the new user', async () => {
    const { status, body } = await http('POST', '/users', { body: { email: 'bob@x.io', password: 'hunter222' } })
    expect(status).toBe(201)
    expect(body).toEqual({ email: 'bob@x.io', id: expect.any(Number), avatar: gravatar('bob@x.io') })
  })

  it('stores a bcrypt $2b$10$ hash', async () => {
    const stored = (await server.app.service('users').get(alice.id)) as Record<string, unknown>
    expect(stored.password).toMatch(/^\$2b\$10\$[./A-Za-z0-9]{53}$/)
  })

  it('logs in with 201 and the v5 login object', async () => {
    const { status, body } = await login('alice@x.io', 'secret-pw')
    expect(status).toBe(201)
    // The v5 object plus the session's refresh token (README "Sessions"); `sid` names the session.
    expect(Object.keys(body!)).toEqual(['accessToken', 'authentication', 'user', 'refreshToken'])
    expect(body!.authentication).toEqual({
      strategy: 'local',
      payload: {
        userId: alice.id,
        sid: expect.any(String),
        iat: expect.any(Number),
        exp: expect.any(Number),
        aud: 'https://yourdomain.com',
        iss: 'feathers',
        sub: String(alice.id),
        jti: expect.any(String)
      }
    })
    expect(body!.refreshToken).toMatch(/^[\w-]{43}$/)
    expect(body!.user).toEqual({ email: 'alice@x.io', name: 'Alice', id: alice.id, avatar: gravatar('alice@x.io') })
    const header = JSON.parse(Buffer.from(String(body!.accessToken).split('.')[0]!, 'base64url').toString())
    expect(header).toEqual({ alg: 'HS256', typ: 'access' })
  })

  it('accepts a urlencoded login body', async () => {
    const response = await fetch(`${server.url}/authentication`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'strategy=local&email=alice%40x.io&password=secret-pw'
    })
    expect(response.status).toBe(201)
  })

  it('answers the same 401 "Invalid login" for an unknown email, a wrong password and missing fields', async () => {
    const unknown = await login('nobody@x.io', 'secret-pw')
    const wrong = await login('alice@x.io', 'wrong')
    const missing = await http('POST', '/authentication', { body: { strategy: 'local', email: 'alice@x.io' } })
    for (const answer of [unknown, wrong, missing]) {
      expect(answer.status).toBe(401)
      expect(answer.body).toEqual(unauthorized('Invalid login'))
    }
    expect(unknown.text).toBe(wrong.text)
  })

  it('answers the strategy errors', async () => {
    const none = await http('POST', '/authentication', { body: { email: 'alice@x.io', password: 'secret-pw' } })
    expect(none.body).toEqual(unauthorized('Invalid authentication information (no `strategy` set)'))
    const other = await http('POST', '/authentication', { body: { strategy: 'github' } })
    expect(other.body).toEqual(
      unauthorized('Invalid authentication information (strategy not allowed in authStrategies)')
    )
    const noToken = await http('POST', '/authentication', { body: { strategy: 'jwt' } })
    expect(noToken.body).toEqual(unauthorized('No access token'))
  })

  it('answers 405 for the methods the authentication service does not have', async () => {
    for (const method of ['GET', 'PUT', 'PATCH']) {
      const answer = await http(method, '/authentication/x', method === 'GET' ? {} : { body: {} })
      expect(answer.status).toBe(405)
    }
  })
})

describe('protected services', () => {
  it('refuse calls without a token with 401 "Not authenticated"', async () => {
    for (const path of ['/messages', '/users', `/users/${alice.id}`]) {
      const { status, body } = await http('GET', path)
      expect(status).toBe(401)
      expect(body).toEqual(unauthorized('Not authenticated'))
    }
    expect((await http('POST', '/messages', { body: { text: 'x' } })).status).toBe(401)
  })

  it('accept Bearer, JWT and raw tokens and ignore Basic', async () => {
    expect((await http('GET', '/messages', { headers: { Authorization: `JWT ${alice.token}` } })).status).toBe(200)
    expect((await http('GET', '/messages', { headers: { Authorization: `bearer ${alice.token}` } })).status).toBe(200)
    expect((await http('GET', '/messages', { headers: { Authorization: alice.token } })).status).toBe(200)
    expect((await http('GET', '/messages', { headers: { Authorization: `Basic ${alice.token}` } })).body).toEqual(
      unauthorized('Not authenticated')
    )
  })

  it('record the author of a message', async () => {
    const { status, body } = await http('POST', '/messages', { token: alice.token, body: { text: 'hello' } })
    expect(status).toBe(201)
    expect(body).toEqual({
      text: 'hello',
      userId: alice.id,
      // Its author, as the users service shows them (never the password).
      user: { email: 'alice@x.io', name: expect.any(String), id: alice.id, avatar: gravatar('alice@x.io') },
      id: expect.any(Number),
      createdAt: expect.any(String),
      updatedAt: expect.any(String)
    })
    // Claiming someone else's authorship is refused, not silently overwritten.
    const forged = await http('POST', '/messages', { token: alice.token, body: { text: 'hello', userId: 999 } })
    expect(forged.status).toBe(400)
  })

  it('never return the password: find, get, $select=password, $select[]=password, patch, remove', async () => {
    const texts = [
      (await http('GET', '/users', { token: alice.token })).text,
      (await http('GET', `/users/${alice.id}`, { token: alice.token })).text,
      (await http('GET', '/users?$select=password', { token: alice.token })).text,
      (await http('GET', '/users?$select[]=password', { token: alice.token })).text,
      (await http('GET', `/users/${alice.id}?$select[]=password`, { token: alice.token })).text,
      (await http('PATCH', `/users/${alice.id}`, { token: alice.token, body: { name: 'Alice A.' } })).text
    ]
    for (const text of texts) {
      expect(text).not.toMatch(/password|\$2b\$/)
    }
    expect(JSON.parse(texts[4]!)).toEqual({ id: alice.id })
    const extra = await http('POST', '/users', { body: { email: 'gone@x.io', password: 'password-1' } })
    // A user may only remove themselves (the reference app's ownership rule).
    const { body: extraSession } = await login('gone@x.io', 'password-1')
    const removed = await http('DELETE', `/users/${extra.body!.id}`, { token: extraSession!.accessToken as string })
    expect(removed.status).toBe(200)
    expect(removed.text).not.toMatch(/password|\$2b\$/)
  })

  it('refuse filtering or sorting by the password, which would leak the hash bit by bit', async () => {
    for (const query of ['password[$gt]=$2b$10$M', '$sort[password]=1', '$or[0][password]=x']) {
      const { status, body } = await http('GET', `/users?${query}`, { token: alice.token })
      expect(status).toBe(400)
      expect(body).toMatchObject({ name: 'BadRequest', message: "Querying by 'password' is not allowed" })
    }
  })

  it('hash a password changed by patch', async () => {
    const { body: created } = await http('POST', '/users', { body: { email: 'carol@x.io', password: 'password-one' } })
    const { body: session } = await login('carol@x.io', 'password-one')
    await http('PATCH', `/users/${created!.id}`, {
      token: session!.accessToken as string,
      body: { password: 'password-two' }
    })
    const stored = (await server.app.service('users').get(created!.id as number)) as Record<string, unknown>
    expect(stored.password).toMatch(/^\$2b\$10\$/)
    expect((await login('carol@x.io', 'password-one')).status).toBe(401)
    expect((await login('carol@x.io', 'password-two')).status).toBe(201)
  })
})

describe('bad tokens get 401 with the v5 messages', () => {
  const claims = { sub: '0', userId: 0 }
  const options = { audience: 'https://yourdomain.com', issuer: 'feathers' }
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')

  it.each([
    ['malformed', () => 'not-a-token', 'jwt malformed'],
    [
      'tampered',
      () => {
        const [h, , s] = alice.token.split('.')
        return `${h}.${part({ ...claims, admin: true, ...options })}.${s}`
      },
      'invalid signature'
    ],
    ['signed with another secret', () => jwt.sign(claims, 'another-secret-0123456789', options), 'invalid signature'],
    [
      'alg none',
      () => `${part({ alg: 'none', typ: 'JWT' })}.${part({ ...claims, aud: options.audience, iss: options.issuer })}.`,
      'jwt signature is required'
    ],
    ['HS512', () => jwt.sign(claims, AUTH_SECRET, { ...options, algorithm: 'HS512' }), 'invalid algorithm'],
    [
      'expired',
      () => jwt.sign({ ...claims, exp: Math.floor(Date.now() / 1000) - 60 }, AUTH_SECRET, options),
      'jwt expired'
    ],
    [
      'wrong audience',
      () => jwt.sign(claims, AUTH_SECRET, { ...options, audience: 'https://evil.example' }),
      'jwt audience invalid. expected: https://yourdomain.com'
    ],
    [
      'wrong issuer',
      () => jwt.sign(claims, AUTH_SECRET, { ...options, issuer: 'evil' }),
      'jwt issuer invalid. expected: feathers'
    ]
  ])('%s', async (_name, token, message) => {
    const { status, body } = await http('GET', '/messages', { token: token() })
    expect(status).toBe(401)
    expect(body).toMatchObject({ name: 'NotAuthenticated', message, code: 401 })
    expect(JSON.stringify(body)).not.toContain('stack')
  })

  it('refuses a valid token of a deleted user with 401', async () => {
    const { body: created } = await http('POST', '/users', { body: { email: 'dave@x.io', password: 'password-1' } })
    const { body: session } = await login('dave@x.io', 'password-1')
    const token = session!.accessToken as string
    expect((await http('DELETE', `/users/${created!.id}`, { token })).status).toBe(200)
    const { status, body } = await http('GET', '/messages', { token })
    expect(status).toBe(401)
    expect(body).toMatchObject({ name: 'NotAuthenticated', code: 401 })
  })
})

describe('re-authentication and logout', () => {
  it('returns the same token for a jwt re-authentication, with 201', async () => {
    const { status, body } = await http('POST', '/authentication', {
      body: { strategy: 'jwt', accessToken: alice.token }
    })
    expect(status).toBe(201)
    expect(body!.accessToken).toBe(alice.token)
    expect(body!.authentication).toMatchObject({ strategy: 'jwt', accessToken: alice.token })
    expect(body!.user).toEqual({
      email: 'alice@x.io',
      name: expect.any(String),
      id: alice.id,
      avatar: gravatar('alice@x.io')
    })
  })

  it("logs out with 200 and the re-authentication object; the session's token is revoked, other sessions stay", async () => {
    const token = (await login('alice@x.io', 'secret-pw')).body!.accessToken as string
    const reauth = await http('POST', '/authentication', { body: { strategy: 'jwt', accessToken: token } })
    const logout = await http('DELETE', '/authentication', { token })
    expect(logout.status).toBe(200)
    expect(logout.body).toEqual(reauth.body)
    expect((await http('DELETE', `/authentication/${token}`, { token })).body).toMatchObject({
      code: 401,
      message: 'Session revoked'
    })
    expect((await http('GET', '/messages', { token })).status).toBe(401)
    expect((await http('GET', '/messages', { token: alice.token })).status).toBe(200)
  })

  it('refuses logout with another id, an id without header, and no header', async () => {
    expect((await http('DELETE', '/authentication/other', { token: alice.token })).body).toEqual(
      unauthorized('Invalid access token')
    )
    expect((await http('DELETE', `/authentication/${alice.token}`)).body).toEqual(unauthorized('Invalid access token'))
    expect((await http('DELETE', '/authentication')).body).toEqual(
      unauthorized('Invalid authentication information (no `strategy` set)')
    )
  })
})

describe('secret handling', () => {
  it('generates a random secret per start with a warning when AUTH_SECRET is missing in development', async () => {
    const first = await startAuthServer({ NODE_ENV: 'development' })
    const second = await startAuthServer({ NODE_ENV: 'development' })
    try {
      expect(first.warnings.join('\n')).toMatch(/AUTH_SECRET is not set/)
      await fetch(`${first.url}/users`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'e@x.io', password: 'password-1' })
      })
      const session = await fetch(`${first.url}/authentication`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ strategy: 'local', email: 'e@x.io', password: 'password-1' })
      }).then((response) => response.json() as Promise<{ accessToken: string }>)
      const elsewhere = await fetch(`${second.url}/messages`, {
        headers: { Authorization: `Bearer ${session.accessToken}` }
      })
      expect(elsewhere.status).toBe(401)
      expect(server.warnings).toEqual([])
    } finally {
      await first.close()
      await second.close()
    }
  })
})
