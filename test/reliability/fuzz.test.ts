import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { Agent, request as httpRequest } from 'node:http'
import type { Socket } from 'socket.io-client'
import type { AuthServer } from '../support/auth-server.js'
import {
  call,
  connectSocket,
  request,
  signup,
  startReferenceServer,
  type HttpAnswer,
  type Session
} from '../support/reference-server.js'

/*
 * Random query strings, bodies, content types and socket frames against the reference app in this
 * process. Every answer must be a JSON success or a JSON 4xx — never a 5xx, never a crash — and
 * nothing may leak onto Object.prototype. The seed is printed; FUZZ_SEED=<n> replays a run and
 * FUZZ_RUNS=<n> changes the number of cases per property.
 */
const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))
const cases = Number(process.env.FUZZ_RUNS ?? 2000)
/** HTTP cases run in batches of this many concurrent requests (one fast-check run per batch). */
const BATCH = 4

let server: AuthServer
let rest: Session
let other: Session
let socketSession: Session
let socket: Socket
let prototypeBefore: Map<string, PropertyDescriptor>

function prototypeSnapshot(): Map<string, PropertyDescriptor> {
  return new Map(
    Object.getOwnPropertyNames(Object.prototype).map((name) => [
      name,
      Object.getOwnPropertyDescriptor(Object.prototype, name)!
    ])
  )
}

beforeAll(async () => {
  console.log(
    `fuzz seed ${seed}, ${cases} cases per property (replay: FUZZ_SEED=${seed} npm test -- test/reliability/fuzz.test.ts)`
  )
  prototypeBefore = prototypeSnapshot()
  server = await startReferenceServer()
  rest = await signup(server.url, 'fuzz@x.io')
  other = await signup(server.url, 'other@x.io')
  socketSession = await signup(server.url, 'socket@x.io')
  for (const session of [rest, other]) {
    for (let index = 0; index < 5; index++)
      await request(server.url, 'POST', '/messages', {
        token: session.token,
        body: { text: `seed ${index}`, n: index, tags: ['a', 'b'] }
      })
  }
  socket = await connectSocket(server.url, socketSession.token)
})
afterAll(async () => {
  socket?.disconnect()
  await server?.close()
})

// Keys and values that have broken query parsers and object handling before.
const KEYS = [
  '$limit',
  '$skip',
  '$sort',
  '$select',
  '$or',
  '$and',
  '$in',
  '$nin',
  '$lt',
  '$lte',
  '$gt',
  '$gte',
  '$ne',
  '$eq',
  '$search',
  '$contains',
  '$regex',
  '$where',
  '$foo',
  '__proto__',
  'constructor',
  'prototype',
  'polluted',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'text',
  'id',
  'userId',
  'email',
  'password',
  'n',
  'tags',
  'a.b',
  'a.__proto__',
  '',
  '0',
  '1e3'
]
const VALUES = [
  '',
  '0',
  '1',
  '-1',
  '5',
  '50',
  '1e309',
  '-0',
  'NaN',
  'Infinity',
  '9007199254740993',
  '99999999999999999999999999',
  'asc',
  'desc',
  'true',
  'false',
  'null',
  'undefined',
  '(a+)+$',
  '.*',
  '[',
  '\\',
  '(?i)seed',
  '\\1',
  '%',
  '%zz',
  '%00',
  'seed 1'
]

const key = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KEYS) },
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ maxLength: 4 })
)
const value = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...VALUES) },
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt().map(String),
  fc.string({ unit: 'grapheme', maxLength: 12 })
)
/** A bracket chain like `a[$or][0][b]`, raw brackets, encoded names. */
const bracketKey = fc
  .tuple(key, fc.array(fc.oneof(key, fc.constant(''), fc.nat({ max: 2000 }).map(String)), { maxLength: 4 }))
  .map(([head, rest]) => encodeURIComponent(head) + rest.map((part) => `[${encodeURIComponent(part)}]`).join(''))
const pair = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(bracketKey, value).map(([name, text]) => `${name}=${encodeURIComponent(text)}`) },
  fc.constantFrom(
    'constructor[prototype][polluted]=1',
    '__proto__[polluted]=1',
    '__proto__.polluted=1',
    '&',
    '=',
    '==',
    '%',
    'a[=1',
    'a]=1',
    '[]=1',
    '[[a]]=1'
  ),
  bracketKey
)
const queryString = fc.array(pair, { maxLength: 8 }).map((pairs) => pairs.join('&'))

/** Ids as a client could put them in a URL, never the fuzz user's own (it must not delete itself). */
const idSegment = fc.oneof(
  fc.constantFrom(
    '0',
    '1',
    '3',
    '999',
    '-1',
    '1e3',
    'null',
    'undefined',
    '__proto__',
    'constructor',
    '%zz',
    '%2F',
    'a%2Fb'
  ),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }).map(encodeURIComponent)
)
const path = fc
  .oneof(
    fc.constantFrom(
      '/messages',
      '/users',
      '/authentication',
      '/nope',
      '//messages',
      '/messages/',
      '/messages/0/extra',
      '/messages/%2e%2e',
      '/messages/%00',
      '/users/:userId',
      '/'
    ),
    fc.tuple(fc.constantFrom('/messages/', '/users/', '/authentication/'), idSegment).map(([base, id]) => base + id)
  )
  .filter(
    (candidate) => candidate !== `/users/${rest.id}` && candidate !== `/users/${encodeURIComponent(String(rest.id))}`
  )
const token = fc.oneof(
  { weight: 4, arbitrary: fc.constant('valid') },
  fc.constant(undefined),
  fc.constantFrom('garbage', 'a.b.c', 'Bearer')
)

/** Nesting deep enough to overflow any recursive walk (the fuzz suite's first real find). */
const DEEP = 20_000
const nested = (open: string, close: string, depth: number, inner = '') =>
  open.repeat(depth) + inner + close.repeat(depth)
const deepJson = `{"text":${nested('[', ']', DEEP)}}`
const deepOr = nested('{"$or":[', ']}', DEEP, '{"a":1}')

/** A deeply nested socket argument that fast-check reports by name (its printer would overflow too). */
class Deep {
  readonly value: unknown
  constructor(
    open: string,
    close: string,
    readonly depth: number,
    inner = ''
  ) {
    this.value = JSON.parse(nested(open, close, depth, inner))
  }

  [fc.toStringMethod](): string {
    return `<${this.depth} levels of nesting>`
  }
}
const unwrap = (argument: unknown) => (argument instanceof Deep ? argument.value : argument)

/** JSON text with dangerous keys at any depth (`"__proto__"` as a JSON key is an own property once parsed). */
const { json } = fc.letrec<{ json: string }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.jsonValue({ maxDepth: 1 }).map((leaf) => JSON.stringify(leaf)),
    fc
      .array(fc.tuple(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 6 })), tie('json')), { maxLength: 5 })
      .map((entries) => `{${entries.map(([name, text]) => `${JSON.stringify(name)}:${text}`).join(',')}}`),
    fc.array(tie('json'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`)
  )
}))
const body = fc.oneof(
  { weight: 5, arbitrary: json },
  queryString,
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    '',
    '{',
    '{"a":',
    '"str"',
    '42',
    'null',
    '[]',
    '{"a":1}x',
    '\u0000',
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    '{"strategy":"local","email":{"$ne":null},"password":{"$ne":null}}',
    '{"strategy":"local","email":"fuzz@x.io","password":"secret"}',
    '{"strategy":"jwt","accessToken":{"$ne":1}}',
    '{"strategy":"__proto__"}',
    '{"strategy":"constructor","accessToken":"x"}',
    '[{"text":"a"},{"text":"b"}]',
    deepJson,
    deepOr
  )
)
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=nope',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/vnd.api+json',
  '',
  '*/*'
)
const contentEncoding = fc.option(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'nope'), { freq: 8 })
const serviceMethod = fc.option(
  fc.constantFrom('find', 'create', 'shout', '__proto__', 'constructor', 'hooks', 'setup', ''),
  { freq: 8 }
)

/** BATCH requests sent together (the error names the one that failed; each still shrinks). */
function batchOf<T>(one: fc.Arbitrary<T>): fc.Arbitrary<T[]> {
  return fc.array(one, { minLength: BATCH, maxLength: BATCH })
}

function headersFor(chosen: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = { ...extra }
  if (chosen !== undefined) headers.Authorization = chosen === 'valid' ? `Bearer ${rest.token}` : chosen
  return headers
}

/**
 * A JSON success, or a JSON framework error whose status is a 4xx; never a 5xx or a stack trace.
 * Outside the services a success may be a static file (public/index.html at `/`).
 */
function assertWellFormed(answer: HttpAnswer, what: string, target: string): void {
  if (answer.status >= 500 || answer.status < 200)
    throw new Error(`${what} → ${answer.status} ${answer.text.slice(0, 300)}`)
  if (answer.status === 204 && answer.text === '') return
  if (answer.status < 400 && !/^\/(messages|users|authentication)(\/|$)/.test(target)) return
  if (!answer.contentType.startsWith('application/json'))
    throw new Error(`${what} → ${answer.status} not JSON (${answer.contentType}): ${answer.text.slice(0, 200)}`)
  if (answer.status >= 400) {
    const error = answer.body as { name?: unknown; message?: unknown; code?: unknown; className?: unknown }
    if (
      error.code !== answer.status ||
      typeof error.name !== 'string' ||
      typeof error.message !== 'string' ||
      typeof error.className !== 'string'
    ) {
      throw new Error(`${what} → ${answer.status} with a malformed error body ${answer.text}`)
    }
  }
  if (answer.text.includes('"stack"') || answer.text.includes('$2b$'))
    throw new Error(`${what} leaked a stack or a hash: ${answer.text}`)
}

/** Raw node:http, so paths reach the server as written (fetch would normalise `/a/%2e%2e` to `/`). */
const agent = new Agent({ keepAlive: true, maxSockets: BATCH })
afterAll(() => agent.destroy())

function send(
  method: string,
  target: string,
  options: { body?: string; headers: Record<string, string> }
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(server.url)
    const outgoing = httpRequest(
      { hostname, port, method, path: target, agent, headers: { Accept: 'application/json', ...options.headers } },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('error', reject)
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString()
          const type = String(response.headers['content-type'] ?? '')
          try {
            resolve({
              status: response.statusCode!,
              contentType: type,
              text,
              body: type.startsWith('application/json') && text ? JSON.parse(text) : undefined
            })
          } catch {
            reject(
              new Error(`${method} ${target} → ${response.statusCode} answered invalid JSON: ${text.slice(0, 200)}`)
            )
          }
        })
      }
    )
    outgoing.on('error', (error) => reject(new Error(`${method} ${target}: ${error.message}`)))
    outgoing.end(options.body)
  })
}

describe(`fuzz (seed ${seed})`, () => {
  it('random query strings on every verb get a JSON success or a JSON 4xx', async () => {
    const one = fc.tuple(fc.constantFrom('GET', 'GET', 'DELETE', 'PATCH', 'PUT', 'HEAD'), path, queryString, token)
    await fc.assert(
      fc.asyncProperty(batchOf(one), async (batch) => {
        await Promise.all(
          batch.map(async ([method, target, query, chosen]) => {
            const url = `${target}?${query}`
            const withBody = method === 'PATCH' || method === 'PUT'
            const answer = await send(method, url, {
              body: withBody ? '{"fuzzed":true}' : undefined,
              headers: headersFor(chosen, withBody ? { 'Content-Type': 'application/json' } : {})
            })
            if (method === 'HEAD') {
              if (answer.status >= 500) throw new Error(`HEAD ${url} → ${answer.status}`)
              return
            }
            assertWellFormed(answer, `${method} ${url}`, target)
          })
        )
      }),
      { seed, numRuns: Math.ceil(cases / BATCH) }
    )
  }, 120_000)

  it('random bodies, content types and encodings get a JSON success or a JSON 4xx', async () => {
    const one = fc.tuple(
      fc.constantFrom('POST', 'PUT', 'PATCH'),
      path,
      body,
      contentType,
      contentEncoding,
      token,
      serviceMethod
    )
    await fc.assert(
      fc.asyncProperty(batchOf(one), async (batch) => {
        await Promise.all(
          batch.map(async ([method, target, text, type, encoding, chosen, custom]) => {
            const headers = headersFor(chosen, type ? { 'Content-Type': type } : {})
            if (encoding !== null) headers['Content-Encoding'] = encoding
            if (custom !== null) headers['X-Service-Method'] = custom
            assertWellFormed(
              await send(method, target, { body: text, headers }),
              `${method} ${target} (${type}, ${encoding}, ${custom}) ${JSON.stringify(text).slice(0, 300)}`,
              target
            )
          })
        )
      }),
      { seed: seed + 1, numRuns: Math.ceil(cases / BATCH) }
    )
  }, 120_000)

  it('random socket frames get an ack with null or a 4xx error, and the connection stays up', async () => {
    const reserved = new Set([
      'connect',
      'connect_error',
      'disconnect',
      'disconnecting',
      'newListener',
      'removeListener'
    ])
    const event = fc
      .oneof(
        {
          weight: 5,
          arbitrary: fc.constantFrom('find', 'get', 'create', 'update', 'patch', 'remove', 'authenticate', 'logout')
        },
        fc.constantFrom('messages::find', 'hooks', 'setup', 'on', 'emit', '__proto__', 'constructor', 'toString', ''),
        fc.string({ maxLength: 10 })
      )
      .filter((name) => !reserved.has(name))
    const argument = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.constantFrom('messages', 'users', 'authentication', 'nope', '', 'messages/0', '/users/')
      },
      json.map((text) => JSON.parse(text) as unknown),
      // socket.io-client's own encoder recurses too: stay below what it can send.
      fc.constantFrom(new Deep('[', ']', 1000), new Deep('{"$or":[', ']}', 1000, '{"a":1}')),
      fc.constantFrom(
        null,
        0,
        1,
        -1,
        1e308,
        'x',
        true,
        { $limit: 'x' },
        { $or: {} },
        { strategy: 'local', email: 'socket@x.io', password: 'wrong' },
        { strategy: 'jwt', accessToken: 'a.b.c' },
        { strategy: 'local', email: { $ne: null }, password: { $ne: null } },
        { strategy: 'local', email: 'socket@x.io', password: 'secret-pw' },
        { strategy: 'jwt', accessToken: { $gt: '' } }
      )
    )
    let disconnected = ''
    socket.on('disconnect', (reason) => {
      disconnected = reason
    })
    await fc.assert(
      fc.asyncProperty(
        event,
        fc.array(argument, { maxLength: 4 }),
        fc.boolean(),
        async (name, printable, alsoWithoutAck) => {
          const args = printable.map(unwrap)
          // Log in again every time: a fuzzed `logout` must not leave the rest of the run unauthenticated.
          // (Local: a fuzzed logout revokes the session, jwt re-authentication with its token would fail.)
          const [login] = await call(
            socket,
            'create',
            'authentication',
            { strategy: 'local', email: 'socket@x.io', password: 'secret-pw' },
            {}
          )
          if (login !== null) throw new Error(`re-login failed: ${JSON.stringify(login)}`)
          if (alsoWithoutAck) socket.emit(name, ...args)
          const answer = await Promise.race([
            call(socket, name, ...args),
            new Promise<never>((_, reject) =>
              socket.once('disconnect', (reason) => reject(new Error(`socket dropped: ${reason}`)))
            )
          ])
          const [error] = answer as [{ code?: unknown; name?: unknown; message?: unknown } | null]
          if (error === null) return
          if (
            typeof error !== 'object' ||
            typeof error.code !== 'number' ||
            error.code < 400 ||
            error.code >= 500 ||
            typeof error.name !== 'string' ||
            typeof error.message !== 'string'
          ) {
            throw new Error(`emit(${JSON.stringify(name)}, ${fc.stringify(printable)}) → ${JSON.stringify(error)}`)
          }
          if (JSON.stringify(error).includes('stack'))
            throw new Error(`socket error with a stack: ${JSON.stringify(error)}`)
        }
      ),
      { seed: seed + 2, numRuns: cases }
    )
    expect(disconnected).toBe('')
    expect(socket.connected).toBe(true)
  }, 120_000)

  it('the server still answers afterwards and Object.prototype is untouched', async () => {
    expect((await request(server.url, 'GET', '/messages?$limit=1', { token: other.token })).status).toBe(200)
    // The last fuzzed frame may have been a `logout`.
    expect(
      (
        await call(
          socket,
          'create',
          'authentication',
          { strategy: 'local', email: 'socket@x.io', password: 'secret-pw' },
          {}
        )
      )[0]
    ).toBeNull()
    const [error, page] = await call(socket, 'find', 'messages', { $limit: 1 })
    expect(error).toBeNull()
    expect(page).toMatchObject({ total: expect.any(Number) })
    const after = prototypeSnapshot()
    expect([...after.keys()].sort()).toEqual([...prototypeBefore.keys()].sort())
    for (const [name, descriptor] of prototypeBefore) {
      const now = after.get(name)!
      expect([now.value, now.get, now.set]).toEqual([descriptor.value, descriptor.get, descriptor.set])
    }
    const probe: Record<string, unknown> = {}
    expect(probe.polluted).toBeUndefined()
    for (const name of KEYS) if (!prototypeBefore.has(name)) expect(name in probe).toBe(false)
    const inherited: string[] = []
    for (const name in probe) inherited.push(name)
    expect(inherited).toEqual([])
  })
})
