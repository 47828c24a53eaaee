import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { brotliCompressSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib'
import { apiDocs } from '../../../src/interfaces/api-docs/index.js'
import type { HttpAppOptions } from '../../../src/interfaces/http/http-engine.js'
import { ENGINES, startHttpServer, type TestServer } from './http-test-server.js'

/*
 * The same raw requests to every engine, configured alike: status, headers and body must be the
 * same byte for byte, except what no client reads: Date, the connection headers, the port echoed
 * back, the body of a redirect (serve-static writes a small HTML page, @fastify/static none) and
 * `Vary: Accept-Encoding` on responses too small to compress (the compression middleware adds it to
 * every compressible response, @fastify/compress to those it compresses) and how a compressed body
 * is framed (chunked, or with its length). This is where a difference
 * nobody thought to test for shows up.
 */
interface Answer {
  status: number
  headers: Record<string, unknown>
  body: string
}
type Case = [method: string, path: string, headers: Record<string, string>, body: string | Buffer | undefined]

function send(url: string, [method, path, headers, body]: Case): Promise<Answer> {
  const { hostname, port } = new URL(url)
  const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers: { ...length, ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const { date: _date, connection: _connection, 'keep-alive': _keepAlive, vary, ...rest } = res.headers
        const status = res.statusCode!
        if (status >= 300 && status < 400)
          return resolve({ status, headers: { location: res.headers.location }, body: '' })
        const raw = Buffer.concat(chunks)
        const compressed = res.headers['content-encoding'] === 'gzip'
        const text = (compressed ? gunzipSync(raw) : raw).toString('utf8')
        const varies = (vary ?? '')
          .split(',')
          .map((name) => name.trim())
          .filter((name) => name && (compressed || name.toLowerCase() !== 'accept-encoding'))
        const headers: Record<string, unknown> = {
          ...rest,
          ...(varies.length > 0 ? { vary: varies.join(', ').toLowerCase() } : {})
        }
        if (compressed) {
          delete headers['content-length']
          delete headers['transfer-encoding']
        }
        resolve({ status, headers, body: text.replaceAll(`:${port}`, ':PORT') })
      })
    })
    req.on('error', reject)
    if (body !== undefined) req.write(body)
    req.end()
  })
}

/** Request headers, and the body as `b`. */
type Headers = Record<string, string | Buffer>
const json = (body: unknown): Headers => ({ 'content-type': 'application/json', b: JSON.stringify(body) })
const form = (body: string): Headers => ({ 'content-type': 'application/x-www-form-urlencoded', b: body })
const gzipped = (type: string, body: string, encoding = 'gzip'): Headers => ({
  'content-type': type,
  'content-encoding': encoding,
  b: gzipSync(body)
})

/** [method, path, headers with the body as `b`]. */
const plain: [string, string, Headers?][] = [
  ['GET', '/messages'],
  ['HEAD', '/messages'],
  ['OPTIONS', '/messages'],
  ['TRACE', '/messages'],
  ['PROPFIND', '/messages'],
  ['GET', '/nope?x=1'],
  ['POST', '/nope', json({})],
  ['DELETE', '/nope'],
  ['GET', '/'],
  ['GET', '/echo/%E0%A4%A'],
  ['GET', '/nope%E0%A4%A'],
  ['GET', `/echo/${'x'.repeat(300)}`],
  ['GET', '/echo/a%2Fb'],
  ['GET', '/users/a%20b/posts'],
  ['GET', '//echo//x//'],
  ['GET', '/Messages'],
  ['GET', '/messages/1/extra'],
  ['POST', '/echo', json({ a: 1 })],
  ['POST', '/echo', { 'content-type': 'application/json', b: '{bad' }],
  ['POST', '/echo', { 'content-type': 'application/json', b: '"str"' }],
  ['POST', '/echo', { 'content-type': 'application/json', b: ' 12' }],
  ['POST', '/echo', { 'content-type': 'application/json', b: ' \n ' }],
  ['PUT', '/echo/1', { 'content-type': 'application/json', b: '[1,' }],
  ['POST', '/echo', { 'content-type': 'application/json', b: '' }],
  ['POST', '/echo', { 'content-type': 'application/json; charset=utf-8', b: '{"a":1}' }],
  ['POST', '/echo', { 'content-type': 'application/vnd.api+json', b: '{"a":1}' }],
  ['POST', '/echo', { 'content-type': 'text/plain', b: 'hello' }],
  ['POST', '/echo', { b: 'no content type' }],
  ['POST', '/echo', json({ t: 'x'.repeat(2000) })],
  ['POST', '/echo', form(Array.from({ length: 1001 }, (_, i) => `a${i}=1`).join('&'))],
  ['POST', '/echo', form(`a${'[b]'.repeat(40)}=1`)],
  ['POST', '/echo', form('constructor[prototype][x]=1&__proto__[y]=2&hasOwnProperty=3')],
  ['DELETE', '/echo/1', { 'content-type': 'application/json', b: '{bad' }],
  ['DELETE', '/echo/1', { 'content-type': 'application/json' }],
  ['PATCH', '/echo/1', { 'content-type': 'application/json' }],
  ['PUT', '/readonly/1', json({})],
  ['POST', '/echo/3?x=1', { 'content-type': 'application/json', 'x-service-method': 'shout', b: '{"text":"a"}' }],
  ['POST', '/echo', { 'content-type': 'application/json', 'x-service-method': 'find', b: '{}' }],
  ['GET', '/redirect'],
  ['GET', '/echo/zero'],
  ['GET', '/boom'],
  ['GET', '/boom/1'],
  ['GET', '/messages?$limit=a'],
  ['GET', '/echo?a[b][c][d][e][f][g][h]=1&__proto__[p]=1'],
  ['GET', '/plain?name[$regex]=A'],
  ['GET', '/messages', { authorization: 'Bearer x.y' }],
  ['GET', '/openapi.json'],
  ['GET', '/docs/swagger-ui.css'],
  ['GET', '/docs/missing.js'],
  ['POST', '/docs/init.js', json({})],
  ['POST', '/echo', gzipped('application/json', '{"zipped":true}')],
  ['POST', '/echo', gzipped('application/x-www-form-urlencoded', 'a[b]=1')],
  [
    'POST',
    '/echo',
    { 'content-type': 'application/json', 'content-encoding': 'deflate', b: deflateSync('{"deflated":1}') }
  ],
  [
    'POST',
    '/echo',
    { 'content-type': 'application/json', 'content-encoding': 'br', b: brotliCompressSync('{"br":1}') }
  ],
  ['POST', '/echo', gzipped('application/json', JSON.stringify({ t: 'x'.repeat(3000) }))],
  ['POST', '/echo', gzipped('application/json', '{}', 'compress')],
  ['POST', '/echo', gzipped('text/plain', 'ignored', 'compress')],
  ['POST', '/echo', { 'content-type': 'application/json; charset=latin1', b: '{}' }],
  [
    'POST',
    '/echo',
    {
      'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1',
      b: Buffer.from('name=Jos\u00e9&x=%E9', 'latin1')
    }
  ],
  ['POST', '/echo', { 'content-type': 'application/x-www-form-urlencoded; charset=koi8-r', b: 'a=1' }],
  ['POST', '/echo', { 'content-type': 'application/json; charset="UTF-8"', b: '{"q":"é"}' }],
  ['POST', '/echo', { 'content-type': 'application/json; charset=utf-16le', b: Buffer.from('{"q":"é"}', 'utf16le') }]
]
const configured: [string, string, Headers?][] = [
  ['GET', '/health'],
  ['HEAD', '/health'],
  ['POST', '/health', json({})],
  ['GET', '/health/'],
  ['GET', '/openapi.json'],
  ['GET', '/docs?x=1'],
  ['GET', '/docs/'],
  ['GET', '/docs/index.html'],
  ['GET', '/docs/init.js'],
  ['HEAD', '/docs/swagger-ui.css'],
  ['GET', '/asyncapi.json'],
  ['GET', '/asyncapi'],
  ['POST', '/asyncapi.json', json({})],
  ['GET', '/'],
  ['GET', '/index.html'],
  ['GET', '/sub'],
  ['GET', '/sub/'],
  ['GET', '/.hidden'],
  ['GET', '/messages'],
  ['POST', '/index.html', json({})],
  ['GET', '/messages', { origin: 'http://app.example' }],
  ['GET', '/messages', { origin: 'http://evil.example' }],
  [
    'OPTIONS',
    '/messages',
    {
      origin: 'http://app.example',
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'authorization'
    }
  ],
  ['OPTIONS', '/nope', { origin: 'http://evil.example', 'access-control-request-method': 'GET' }],
  ['GET', '/plain', { 'accept-encoding': 'gzip' }],
  ['GET', '/plain', { 'accept-encoding': 'identity' }],
  ['GET', '/echo/1', { 'accept-encoding': 'gzip' }]
]
const cases = (list: typeof plain): Case[] =>
  list.map(([method, path, { b, ...headers } = {}]) => [method, path, headers as Record<string, string>, b])

/** Sends every request to one server per engine; resolves with the answers that differ from the first engine's. */
async function differences(
  options: HttpAppOptions,
  list: typeof plain,
  seed?: (server: TestServer) => Promise<void>
): Promise<unknown[]> {
  const servers = await Promise.all(ENGINES.map((engine) => startHttpServer(engine, options)))
  const found: unknown[] = []
  try {
    for (const server of servers) await seed?.(server)
    for (const request of cases(list)) {
      const [first, ...others] = await Promise.all(servers.map((server) => send(server.url, request)))
      for (const [index, other] of others.entries()) {
        if (!isDeepStrictEqual(other, first))
          found.push({ request: request.slice(0, 3), [ENGINES[0]!]: first, [ENGINES[index + 1]!]: other })
      }
    }
  } finally {
    for (const server of servers) await server.close()
  }
  return found
}

describe(`${ENGINES.join(' and ')} answer alike`, () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'plumage-parity-'))
    await writeFile(join(dir, 'index.html'), '<h1>chat</h1>')
    await writeFile(join(dir, '.hidden'), 'no')
    await (await import('node:fs/promises')).mkdir(join(dir, 'sub'))
    await writeFile(join(dir, 'sub', 'index.html'), 'sub')
  })
  afterAll(() => rm(dir, { recursive: true }))

  it('with the default options and the API docs', async () => {
    expect(
      await differences({ bodyLimit: '1kb', extensions: [apiDocs({ title: 'parity', version: '1' })] }, plain)
    ).toEqual([])
  })

  it('with health, API docs, static files, CORS and compression', async () =>
    expect(
      await differences(
        {
          health: { version: '9.9.9', check: async () => ({ ready: true, checks: { reachable: true }, problems: [] }) },
          extensions: [apiDocs({ title: 'parity', version: '1' })],
          staticDir: dir,
          corsOrigins: ['http://app.example'],
          compression: true
        },
        configured,
        async (server) => {
          for (let i = 0; i < 30; i++)
            await server.app.service('plain').create({ text: `message ${i}`, padding: 'x'.repeat(40) })
        }
      )
    ).toEqual([]))
})
