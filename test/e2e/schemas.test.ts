import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import authClientModule from '@feathersjs/authentication-client'
import { feathers, type Application } from '@feathersjs/feathers'
import restClientModule from '@feathersjs/rest-client'
import socketioClientModule from '@feathersjs/socketio-client'
import type { Socket } from 'socket.io-client'
import { AdapterService } from '../../src/application/adapter-service.js'
import { validateSchemas } from '../../src/application/schema/validate-schemas.js'
import type { JsonSchemaObject } from '../../src/domain/schema/json-schema.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { connect, disconnectAll, emitAck, nextEvent } from '../interfaces/socketio/support.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { gravatar } from '../support/gravatar.js'

/*
 * The schema rules of the reference app (the schema files of src/services) through every way in: REST,
 * raw socket.io frames, and the official Feathers v5 clients (rest-client, socketio-client).
 * `people` is an extra service with a query schema of every coercible type.
 */
const restClient = restClientModule.default
const socketioClient = socketioClientModule.default
const authClient = authClientModule.default
type FeathersSocket = Parameters<typeof socketioClient>[0]

const peopleQuery: JsonSchemaObject = {
  type: 'object',
  properties: {
    age: { type: 'integer' },
    score: { type: 'number' },
    active: { type: 'boolean' },
    nickname: { type: ['string', 'null'] },
    born: { type: 'string', format: 'date-time' }
  },
  additionalProperties: false
}
const PEOPLE = [
  { name: 'Ann', age: 30, score: 1.5, active: true, nickname: null, born: '1996-01-01T00:00:00.000Z' },
  { name: 'Bob', age: 41, score: -2, active: false, nickname: 'bobby', born: '1985-06-15T12:00:00.000Z' },
  { name: 'Cid', age: 30, score: 0, active: true, nickname: 'c', born: '2001-09-09T09:09:09.000Z' }
]

let server: AuthServer
let token: string
const sockets: Socket[] = []

beforeAll(async () => {
  server = await startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4' })
  server.app.use('people', new AdapterService(new InMemoryStore(), { paginate: { default: 50, max: 50 } }), {
    schemas: { query: peopleQuery }
  })
  server.app.service('people').hooks({ before: { find: [validateSchemas()] } })
  for (const person of PEOPLE) await server.app.service('people').create(person)
  await rest('POST', '/users', { email: 'schema@x.io', password: 'schema-secret' })
  token = (
    await rest('POST', '/authentication', { strategy: 'local', email: 'schema@x.io', password: 'schema-secret' })
  ).body.accessToken as string
})
afterEach(() => disconnectAll(server.app, sockets))
afterAll(() => server.close())

interface Answer {
  status: number
  body: Record<string, unknown> & { data?: unknown; errors?: Record<string, string> }
}

async function rest(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
): Promise<Answer> {
  const response = await fetch(server.url + path, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...headers
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : {} }
}

async function socket(): Promise<Socket> {
  const opened = await connect(server.url, { extraHeaders: { Authorization: `Bearer ${token}` } })
  sockets.push(opened)
  return opened
}

describe('users: validated signups, unique emails', () => {
  it('refuses {} with one 400 that lists every missing field', async () => {
    const { status, body } = await rest('POST', '/users', {})
    expect(status).toBe(400)
    expect(body).toEqual({
      name: 'BadRequest',
      code: 400,
      className: 'bad-request',
      message: "Invalid data: 'email' is required; 'password' is required",
      data: [
        { field: 'email', rule: 'required', message: "'email' is required" },
        { field: 'password', rule: 'required', message: "'password' is required" }
      ],
      errors: { email: "'email' is required", password: "'password' is required" }
    })
  })

  it('refuses a missing email, a bad email, an empty or short or long password and a role', async () => {
    expect((await rest('POST', '/users', { password: 'long enough' })).body.errors).toEqual({
      email: "'email' is required"
    })
    expect((await rest('POST', '/users', { email: 'x', password: '' })).body.errors).toEqual({
      email: "'email' must be a valid email address",
      password: "'password' must have at least 8 characters"
    })
    expect((await rest('POST', '/users', { email: 'a@x.io', password: 'p'.repeat(129) })).body.errors).toEqual({
      password: "'password' must have at most 128 characters"
    })
    expect(
      (await rest('POST', '/users', { email: `${'a'.repeat(250)}@x.io`, password: 'long enough' })).body.errors
    ).toEqual({ email: "'email' must have at most 254 characters" })
    const role = await rest('POST', '/users', { email: 'admin@x.io', password: 'long enough', role: 'admin' })
    expect([role.status, role.body.errors]).toEqual([400, { role: "'role' is not an allowed field" }])
  })

  it('keeps one account per email, case-insensitively, and logs in by email in any case', async () => {
    const first = await rest('POST', '/users', { email: ' Twice@Example.com', password: 'first-secret' })
    expect(first.status).toBe(201)
    // Stored and answered as typed (trimmed), with the Gravatar of the address set at signup.
    const avatar = gravatar('Twice@Example.com')
    expect(first.body).toEqual({ id: expect.any(Number), email: 'Twice@Example.com', avatar })
    expect((await rest('GET', `/users/${first.body.id}`)).body).toEqual({
      id: first.body.id,
      email: 'Twice@Example.com',
      avatar
    })
    const again = await rest('POST', '/users', { email: ' twice@EXAMPLE.com', password: 'second-secret' })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({
      name: 'Conflict',
      message: 'email already registered',
      code: 409,
      className: 'conflict',
      errors: { email: 'email already registered' }
    })
    expect((await rest('GET', '/users?email=twice@example.com')).body.data).toEqual([
      { id: first.body.id, email: 'Twice@Example.com', avatar }
    ])
    expect((await rest('GET', '/users?email=TWICE@example.com')).body.total).toBe(1)
    const login = await rest('POST', '/authentication', {
      strategy: 'local',
      email: 'TWICE@example.COM',
      password: 'first-secret'
    })
    expect(login.status).toBe(201)
    expect(login.body.user).toEqual({ id: first.body.id, email: 'Twice@Example.com', avatar })
    expect(
      (
        await rest('POST', '/authentication', {
          strategy: 'local',
          email: 'twice@example.com',
          password: 'second-secret'
        })
      ).status
    ).toBe(401)
  })

  it('sends a `users created` event with the email exactly as sent', async () => {
    const watcher = await socket()
    // Logged in by its handshake (before it connected): it is in 'authenticated'.
    const created = nextEvent<{ email: string }>(watcher, 'users created')
    expect((await rest('POST', '/users', { email: 'Ann.Lee@Example.com', password: 'ann-lee-secret' })).status).toBe(
      201
    )
    expect(await created).toEqual({
      id: expect.any(Number),
      email: 'Ann.Lee@Example.com',
      avatar: gravatar('Ann.Lee@Example.com')
    })
  })

  it('changes only the case of an email (no conflict with itself), and finds it by the new spelling in any case', async () => {
    const { body: user } = await rest('POST', '/users', { email: 'recase@x.io', password: 'recase-secret' })
    const session = (
      await rest('POST', '/authentication', { strategy: 'local', email: 'recase@x.io', password: 'recase-secret' })
    ).body.accessToken as string
    const patched = await rest(
      'PATCH',
      `/users/${user.id}`,
      { email: 'ReCase@X.io' },
      { Authorization: `Bearer ${session}` }
    )
    // The avatar is set at signup only, as feathers-chat does (the same picture: Gravatar ignores case).
    expect(patched.body).toEqual({ id: user.id, email: 'ReCase@X.io', avatar: gravatar('recase@x.io') })
    expect(
      (await rest('POST', '/authentication', { strategy: 'local', email: 'RECASE@x.io', password: 'recase-secret' }))
        .status
    ).toBe(201)
    expect((await rest('GET', '/users?email=recase@x.io')).body.data).toEqual([
      { id: user.id, email: 'ReCase@X.io', avatar: gravatar('recase@x.io') }
    ])
  })

  it('answers 100 simultaneous signups with one email with exactly one 201 and 99 × 409', async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        rest('POST', '/users', { email: i % 2 ? 'Crowd@x.io' : 'crowd@X.IO', password: `password-${i}` })
      )
    )
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status === 201)).toHaveLength(1)
    expect(statuses.filter((status) => status === 409)).toHaveLength(99)
    for (const answer of answers.filter((one) => one.status === 409))
      expect(answer.body.message).toBe('email already registered')
    expect((await rest('GET', '/users?email=crowd@x.io')).body.total).toBe(1)
  }, 30_000)

  it('frees an email when its account changes it or is removed', async () => {
    const { body: user } = await rest('POST', '/users', { email: 'mover@x.io', password: 'mover-secret' })
    const session = (
      await rest('POST', '/authentication', { strategy: 'local', email: 'mover@x.io', password: 'mover-secret' })
    ).body.accessToken as string
    const auth = { Authorization: `Bearer ${session}` }
    expect((await rest('PATCH', `/users/${user.id}`, { email: 'schema@x.io' }, auth)).status).toBe(409)
    expect((await rest('PATCH', `/users/${user.id}`, { email: 'Mover@x.io' }, auth)).status).toBe(200)
    expect((await rest('PATCH', `/users/${user.id}`, { email: 'moved@x.io' }, auth)).body.email).toBe('moved@x.io')
    expect((await rest('POST', '/users', { email: 'mover@x.io', password: 'taker-secret' })).status).toBe(201)
    expect((await rest('DELETE', `/users/${user.id}`, undefined, auth)).status).toBe(200)
    expect((await rest('POST', '/users', { email: 'moved@x.io', password: 'taker-secret' })).status).toBe(201)
  })

  it('refuses querying fields users do not have', async () => {
    const { status, body } = await rest('GET', '/users?role=admin')
    expect([status, body.errors]).toEqual([400, { role: "'role' is not a field that can be queried" }])
  })
})

describe('messages: text required, server-owned fields, extensions, arrays', () => {
  it('refuses a message without text, with blank text, too long, or as text/plain', async () => {
    expect((await rest('POST', '/messages', {})).body.errors).toEqual({ text: "'text' is required" })
    expect((await rest('POST', '/messages', { text: '   ' })).body.errors).toEqual({
      text: "'text' must have at least 1 character"
    })
    expect((await rest('POST', '/messages', { text: 'x'.repeat(2001) })).body.errors).toEqual({
      text: "'text' must have at most 2000 characters"
    })
    expect((await rest('POST', '/messages', { text: 5 })).body.errors).toEqual({ text: "'text' must be string" })
    const plain = await rest('POST', '/messages', 'hello', { 'Content-Type': 'text/plain' })
    expect([plain.status, plain.body.errors]).toEqual([400, { text: "'text' is required" }])
  })

  it('refuses userId, createdAt, updatedAt and id from clients and stamps them itself', async () => {
    const forged = await rest('POST', '/messages', { text: 'hi', userId: 99, createdAt: '2100-01-01T00:00:00Z', id: 5 })
    expect(forged.status).toBe(400)
    expect(Object.keys(forged.body.errors!)).toEqual(['id', 'userId', 'createdAt'])
    const before = Date.now()
    const { status, body } = await rest('POST', '/messages', {
      text: '  trimmed  ',
      mood: 'happy',
      meta: { tags: ['a'] }
    })
    expect(status).toBe(201)
    expect(body).toEqual({
      id: expect.any(Number),
      text: 'trimmed',
      mood: 'happy',
      meta: { tags: ['a'] },
      userId: expect.any(Number),
      user: expect.objectContaining({ id: body.userId }),
      createdAt: expect.any(String),
      updatedAt: body.createdAt
    })
    expect(Date.parse(body.createdAt as string)).toBeGreaterThanOrEqual(before - 1000)
    // Extensions are stored and queried as today (as sent: strings over REST).
    expect((await rest('GET', '/messages?mood=happy')).body.total).toBe(1)
    const patched = await rest('PATCH', `/messages/${body.id}`, { createdAt: '2000-01-01T00:00:00Z' })
    expect([patched.status, patched.body.errors]).toEqual([
      400,
      { createdAt: "'createdAt' is set by the server and may not be sent" }
    ])
  })

  it('creates several messages from an array, validating each item', async () => {
    const created = await rest('POST', '/messages', [{ text: 'one' }, { text: 'two' }])
    expect(created.status).toBe(201)
    expect((created.body as unknown as { text: string }[]).map((message) => message.text)).toEqual(['one', 'two'])
    const bad = await rest('POST', '/messages', [{ text: 'fine' }, {}, { text: '' }])
    expect(bad.status).toBe(400)
    expect(bad.body.errors).toEqual({
      '1.text': "item 1: 'text' is required",
      '2.text': "item 2: 'text' must have at least 1 character"
    })
  })

  it('coerces ids, author and dates in queries to their types', async () => {
    const { body: one } = await rest('POST', '/messages', { text: 'coerced' })
    const { body: two } = await rest('POST', '/messages', { text: 'coerced too' })
    const byIds = await rest('GET', `/messages?id[$in][]=${one.id}&id[$in][]=${two.id}&$sort[id]=1`)
    expect((byIds.body.data as { id: number }[]).map((message) => message.id)).toEqual([one.id, two.id])
    expect((await rest('GET', `/messages?userId=${one.userId}&id=${one.id}`)).body.total).toBe(1)
    const since = new Date(Date.parse(one.createdAt as string) - 1).toISOString()
    expect(
      (await rest('GET', `/messages?createdAt[$gt]=${since}&text[$in][]=coerced&text[$in][]=coerced too`)).body.total
    ).toBe(2)
    expect((await rest('GET', '/messages?createdAt[$gt]=soon')).body.errors).toEqual({
      createdAt: "'createdAt' must be a date-time (RFC 3339, e.g. 2026-01-31T12:00:00Z)"
    })
  })
})

describe('query coercion gives REST and socket.io the same results', () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['age=30', { age: 30 }, ['Ann', 'Cid']],
    ['age[$in][]=30&age[$in][]=41', { age: { $in: [30, 41] } }, ['Ann', 'Bob', 'Cid']],
    ['age[$gte]=31', { age: { $gte: 31 } }, ['Bob']],
    ['score[$lt]=1', { score: { $lt: 1 } }, ['Bob', 'Cid']],
    ['age[$ne]=30', { age: { $ne: 30 } }, ['Bob']],
    ['active=false', { active: false }, ['Bob']],
    ['nickname=null', { nickname: null }, ['Ann']],
    ['born[$lt]=1990-01-01', { born: { $lt: '1990-01-01T00:00:00Z' } }, ['Bob']],
    [
      '$or[0][age]=41&$or[1][active]=false&$or[2][score]=0',
      { $or: [{ age: 41 }, { active: false }, { score: 0 }] },
      ['Bob', 'Cid']
    ],
    [
      '$and[0][age][$in][0]=30&$and[1][score][$gt]=-1',
      { $and: [{ age: { $in: [30] } }, { score: { $gt: -1 } }] },
      ['Ann', 'Cid']
    ]
  ]

  it.each(cases)('?%s', async (search, query, names) => {
    const viaRest = await rest('GET', `/people?${search}`)
    expect(viaRest.status).toBe(200)
    const restNames = (viaRest.body.data as { name: string }[]).map((person) => person.name).sort()
    const [error, page] = (await emitAck(await socket(), 'find', 'people', query)) as [
      unknown,
      { data: { name: string }[] }
    ]
    expect(error).toBeNull()
    expect(restNames).toEqual(names)
    expect(page.data.map((person) => person.name).sort()).toEqual(names)
  })

  it('refuses NaN, Infinity and 1e999, and undeclared fields, over both transports', async () => {
    for (const value of ['NaN', 'Infinity', '1e999']) {
      expect((await rest('GET', `/people?score=${value}`)).body.errors).toEqual({ score: "'score' must be number" })
    }
    const [error] = (await emitAck(await socket(), 'find', 'people', { age: 'thirty', shoe: 42 })) as [
      { errors: unknown }
    ]
    expect(error).toMatchObject({
      name: 'BadRequest',
      code: 400,
      errors: { age: "'age' must be integer", shoe: "'shoe' is not a field that can be queried" }
    })
  })
})

describe('over socket.io and the official Feathers clients', () => {
  it('raw socket frames get the same 400s and 409', async () => {
    const caller = await socket()
    const [invalid] = (await emitAck(caller, 'create', 'messages', { userId: 3 }, {})) as [{ errors: unknown }]
    expect(invalid).toMatchObject({
      name: 'BadRequest',
      code: 400,
      errors: { text: "'text' is required", userId: "'userId' is set by the server and may not be sent" }
    })
    const [taken] = (await emitAck(
      caller,
      'create',
      'users',
      { email: 'SCHEMA@x.io', password: 'another-secret' },
      {}
    )) as [unknown]
    expect(taken).toMatchObject({ name: 'Conflict', code: 409, message: 'email already registered' })
    const [, created] = (await emitAck(caller, 'create', 'messages', [{ text: 'a' }, { text: 'b' }], {})) as [
      null,
      unknown[]
    ]
    expect(created).toHaveLength(2)
  })

  it('@feathersjs/rest-client and @feathersjs/socketio-client rebuild the errors with every field', async () => {
    const restApp = feathers()
      .configure(restClient(server.url).fetch(fetch))
      .configure(authClient({ storage: new authClientModule.MemoryStorage() }))
    const opened = await connect(server.url)
    sockets.push(opened)
    const socketApp = feathers()
      .configure(socketioClient(opened as unknown as FeathersSocket))
      .configure(authClient({ storage: new authClientModule.MemoryStorage() }))
    for (const app of [restApp, socketApp] as Application[]) {
      await expect(app.service('users').create({ email: 'nope', password: 'short' })).rejects.toMatchObject({
        name: 'BadRequest',
        code: 400,
        errors: {
          email: "'email' must be a valid email address",
          password: "'password' must have at least 8 characters"
        }
      })
      await expect(
        app.service('users').create({ email: 'Schema@X.io', password: 'another-secret' })
      ).rejects.toMatchObject({ name: 'Conflict', code: 409, message: 'email already registered' })
      await app.authenticate({ strategy: 'local', email: 'SCHEMA@x.io', password: 'schema-secret' })
      await expect(app.service('messages').create({ text: '' })).rejects.toMatchObject({
        name: 'BadRequest',
        errors: { text: "'text' must have at least 1 character" }
      })
      const created = await app
        .service('messages')
        .create([{ text: 'official one' }, { text: 'official two', tone: 'dry' }])
      expect(created).toEqual([
        expect.objectContaining({ text: 'official one', createdAt: expect.any(String) }),
        expect.objectContaining({ text: 'official two', tone: 'dry' })
      ])
      const found = await app
        .service('messages')
        .find({ query: { id: { $in: created.map((message: { id: number }) => String(message.id)) } } })
      expect(found.total).toBe(2)
      await app.logout()
    }
  })
})
