import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import axios from 'axios'
import request from 'request'
import superagent from 'superagent'
import {
  BadRequest,
  FeathersError,
  Forbidden,
  MethodNotAllowed,
  NotFound,
  Unavailable
} from '../../../../src/domain/errors/errors.js'
import { createClient, type ClientApp } from '../../../../src/interfaces/client/client-app.js'
import type { SuperagentLike } from '../../../../src/interfaces/client/rest/http-libraries.js'
import { rest } from '../../../../src/interfaces/client/rest/rest-client.js'
import { jqueryInJsdom } from '../../../support/jquery-in-jsdom.js'
import { startHttpServer, type TestServer } from '../../http/http-test-server.js'

let server: TestServer
let jquery: ReturnType<typeof jqueryInJsdom>

beforeAll(async () => {
  server = await startHttpServer('express')
  jquery = jqueryInJsdom(server.url)
})
afterAll(async () => {
  await jquery.close()
  await server.close()
})

type Connect = (url: string, headers?: Record<string, string>) => ClientApp
const libraries: [string, Connect][] = [
  ['fetch', (url, headers) => createClient().configure(rest(url).fetch(fetch, { headers }))],
  ['axios', (url, headers) => createClient().configure(rest(url).axios(axios, { headers }))],
  [
    'superagent',
    (url, headers) =>
      createClient().configure(rest(url).superagent(superagent as unknown as SuperagentLike, { headers }))
  ],
  ['jquery', (url, headers) => createClient().configure(rest(url).jquery(jquery.$, { headers }))],
  ['request', (url, headers) => createClient().configure(rest(url).request(request.defaults({ headers })))]
]

describe.each(libraries)('REST client over %s', (library, connect) => {
  let client: ClientApp
  beforeAll(() => {
    client = connect(server.url, { 'X-Default': library })
  })

  it('runs the six methods with the server signatures', async () => {
    const messages = client.service('messages')
    const created = (await messages.create({ text: `from ${library}` })) as { id: number; text: string }
    expect(created.text).toBe(`from ${library}`)
    await expect(messages.get(created.id)).resolves.toEqual(created)
    const page = await messages.find({ query: { text: `from ${library}` } })
    expect(page).toMatchObject({ total: 1, data: [created] })
    // The server stamps createdAt (kept by update) and updatedAt (every write).
    const stamps = { createdAt: (created as { createdAt?: string }).createdAt, updatedAt: expect.any(String) }
    await expect(messages.update(created.id, { text: 'new' })).resolves.toEqual({
      text: 'new',
      id: created.id,
      ...stamps
    })
    await expect(messages.patch(created.id, { more: 1 })).resolves.toEqual({
      text: 'new',
      more: 1,
      id: created.id,
      ...stamps
    })
    await expect(messages.remove(created.id)).resolves.toEqual({ text: 'new', more: 1, id: created.id, ...stamps })
  })

  it('encodes queries so the server parses the same object', async () => {
    const query = {
      a: 1,
      b: true,
      n: null,
      arr: [1, 2],
      nested: { $gt: 5 },
      $limit: 2,
      $sort: { x: -1 },
      s: "it's (50%)*!"
    }
    const result = (await client.service('echo').find({ query })) as unknown as { query: unknown }
    expect(result.query).toEqual({
      a: '1',
      b: 'true',
      n: '',
      arr: ['1', '2'],
      nested: { $gt: '5' },
      $limit: '2',
      $sort: { x: '-1' },
      s: "it's (50%)*!"
    })
  })

  it('sends a 500-value $in that stays an array', async () => {
    const values = Array.from({ length: 500 }, (_, i) => `v${i}`)
    const result = (await client.service('echo').find({ query: { name: { $in: values } } })) as unknown as {
      query: { name: { $in: string[] } }
    }
    expect(result.query.name.$in).toEqual(values)
  })

  it('creates arrays, patches and removes many', async () => {
    const multi = client.service('multi')
    const created = await multi.create([
      { lib: library, k: 1 },
      { lib: library, k: 2 }
    ])
    expect(created).toHaveLength(2)
    const patched = (await multi.patch(null, { done: 'yes' }, { query: { lib: library } })) as unknown[]
    expect(patched).toHaveLength(2)
    const removed = (await multi.remove(null, { query: { lib: library } })) as unknown[]
    expect(removed).toHaveLength(2)
  })

  it('sends default headers and per-call params.headers (the call wins)', async () => {
    const echo = client.service('echo')
    const plain = (await echo.get('h')) as { headers: Record<string, string> }
    expect(plain.headers['x-default']).toBe(library)
    expect(plain.headers.accept).toBe('application/json')
    const overridden = (await echo.get('h', { headers: { 'X-Default': 'call', 'X-Call': 'yes' } })) as {
      headers: Record<string, string>
    }
    expect(overridden.headers['x-default']).toBe('call')
    expect(overridden.headers['x-call']).toBe('yes')
  })

  it('encodes ids and fills route placeholders', async () => {
    await expect(client.service('echo').get('a b/c')).resolves.toMatchObject({ id: 'a b/c' })
    const post = await client.service('users/:userId/posts').get(7, { route: { userId: 'x y' } })
    expect(post).toMatchObject({ id: '7', route: { userId: 'x y' } })
  })

  it('calls custom methods', async () => {
    const echo = client.service('echo').methods('shout')
    await expect(echo.shout({ text: 'hey' }, { query: { q: 1 } })).resolves.toEqual({
      shouted: 'HEY',
      query: { q: '1' }
    })
  })

  it('resolves 204 answers with null', async () => {
    await expect(client.service('echo').get('zero')).resolves.toBeNull()
  })

  it('rebuilds error classes with name, code and data', async () => {
    const missing = await client
      .service('messages')
      .get(999_999)
      .catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(NotFound)
    expect(missing).toMatchObject({ name: 'NotFound', code: 404, message: "No record found for id '999999'" })
    const { id } = (await client.service('guarded').create({ a: 1 })) as { id: number }
    const refused = await client
      .service('guarded')
      .remove(id)
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(Forbidden)
    expect(refused).toMatchObject({ data: { provider: 'rest' }, message: 'Removing is not allowed from outside' })
    await expect(client.service('plain').create([{ a: 1 }])).rejects.toBeInstanceOf(MethodNotAllowed)
    const unknown = await client
      .service('nope')
      .find()
      .catch((error: unknown) => error)
    expect(unknown).toMatchObject({ name: 'NotFound', data: { url: '/nope' } })
  })

  it('checks ids before sending', async () => {
    const error = await client
      .service('messages')
      .get('')
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BadRequest)
    expect((error as Error).message).toBe('id for .get is required')
    await expect(client.service('messages').remove(undefined as never)).rejects.toThrow('id for .remove is required')
  })

  it('emits local events for its own calls, one per record', async () => {
    const multi = client.service('multi')
    const seen: unknown[] = []
    const listener = (data: unknown) => seen.push(data)
    multi.on('created', listener)
    await multi.create([{ ev: 1 }, { ev: 2 }])
    multi.off('created', listener)
    await multi.create({ ev: 3 })
    expect(seen).toEqual([expect.objectContaining({ ev: 1 }), expect.objectContaining({ ev: 2 })])
  })

  it('turns a refused connection into Unavailable', async () => {
    const offline = connect('http://127.0.0.1:1')
    const error = await offline
      .service('messages')
      .find()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Unavailable)
    expect((error as FeathersError).message).toMatch(/Could not reach http:\/\/127\.0\.0\.1:1/)
  })
})

describe('request defaults', () => {
  it('keep basic-auth settings { user, pass, sendImmediately }', async () => {
    const authed = request.defaults({ auth: { user: 'ann', pass: 'secret', sendImmediately: true } })
    const client = createClient().configure(rest(server.url).request(authed))
    const result = (await client.service('echo').get('h')) as { headers: Record<string, string> }
    expect(result.headers.authorization).toBe(`Basic ${Buffer.from('ann:secret').toString('base64')}`)
  })
})
