import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { request as httpRequest } from 'node:http'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import request from 'supertest'
import { ENGINES, startHttpServer, type TestServer } from './http-test-server.js'

/** docs/wire-protocol.md, REST, row by row, on every HTTP engine. */
describe.each(ENGINES)('REST on %s', (engine) => {
  let server: TestServer
  let http: ReturnType<typeof request>

  beforeAll(async () => {
    server = await startHttpServer(engine, { bodyLimit: '1kb' })
    http = request(server.url)
  })
  afterAll(() => server.close())

  describe('REST mapping (routes and status codes)', () => {
    it('GET /path calls find with a page object for paginated services', async () => {
      const res = await http.get('/messages').expect(200)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(res.body).toEqual({ total: 0, limit: 10, skip: 0, data: [] })
    })

    it('POST /path creates (201), GET /path/:id gets, PUT updates, PATCH patches, DELETE removes', async () => {
      const created = await http.post('/messages').send({ text: 'hello' }).expect(201)
      expect(created.body).toEqual({
        text: 'hello',
        id: expect.anything(),
        createdAt: expect.any(String),
        updatedAt: created.body.createdAt
      })
      const { id, createdAt } = created.body
      await http.get(`/messages/${id}`).expect(200, created.body)
      const stamps = { createdAt, updatedAt: expect.any(String) }
      expect((await http.put(`/messages/${id}`).send({ text: 'replaced', extra: 1 }).expect(200)).body).toEqual({
        text: 'replaced',
        extra: 1,
        id,
        ...stamps
      })
      expect((await http.patch(`/messages/${id}`).send({ extra: 2 }).expect(200)).body).toEqual({
        text: 'replaced',
        extra: 2,
        id,
        ...stamps
      })
      expect((await http.delete(`/messages/${id}`).expect(200)).body).toEqual({
        text: 'replaced',
        extra: 2,
        id,
        ...stamps
      })
      const missing = await http.get(`/messages/${id}`).expect(404)
      expect(missing.body).toEqual({
        name: 'NotFound',
        message: `No record found for id '${id}'`,
        code: 404,
        className: 'not-found',
        errors: {}
      })
    })

    it('POST with an array creates several records on a multi service', async () => {
      const res = await http
        .post('/multi')
        .send([{ n: 1 }, { n: 2 }])
        .expect(201)
      expect(res.body).toHaveLength(2)
      await http.post('/multi').send([]).expect(201, [])
    })

    it('POST /path/:id creates and ignores the id (v5)', async () => {
      const res = await http.post('/echo/7').send({ a: 1 }).expect(201)
      expect(res.body).toEqual({ method: 'create', data: { a: 1 }, query: {} })
    })

    it('id-less PATCH and DELETE act on every record matching the URL query', async () => {
      await http
        .post('/multi')
        .send([
          { city: 'Rome', k: 'x' },
          { city: 'Rome', k: 'y' },
          { city: 'Oslo', k: 'z' }
        ])
        .expect(201)
      const patched = await http.patch('/multi?city=Rome').send({ seen: 'yes' }).expect(200)
      expect(patched.body.map((r: { k: string }) => r.k).sort()).toEqual(['x', 'y'])
      expect(patched.body.every((r: { seen: string }) => r.seen === 'yes')).toBe(true)
      await http.patch('/multi?city=Nowhere').send({ seen: 'no' }).expect(200, [])
      const removed = await http.delete('/multi?city=Rome').expect(200)
      expect(removed.body).toHaveLength(2)
      await http.get('/multi?city=Rome').expect(200, [])
    })

    it('id-less PUT is a 400 asking for patch', async () => {
      const res = await http.put('/multi').send({ a: 1 }).expect(400)
      expect(res.body.message).toBe("You can not replace multiple instances. Did you mean 'patch'?")
    })

    it('multi operations are 405 where the service does not allow them', async () => {
      expect(
        (
          await http
            .post('/plain')
            .send([{ a: 1 }])
            .expect(405)
        ).body.message
      ).toBe('Can not create multiple entries')
      expect((await http.patch('/plain').send({ a: 1 }).expect(405)).body.message).toBe(
        'Can not patch multiple entries'
      )
      expect((await http.delete('/plain').expect(405)).body.message).toBe('Can not remove multiple entries')
    })

    it('runs custom methods through POST with X-Service-Method (200, id segment ignored)', async () => {
      const res = await http.post('/echo/9?x=1').set('X-Service-Method', 'shout').send({ text: 'hi' }).expect(200)
      expect(res.body).toEqual({ shouted: 'HI', query: { x: '1' } })
    })

    it('refuses unlisted and standard names in X-Service-Method with 405', async () => {
      const hidden = await http.post('/echo').set('X-Service-Method', 'hidden').send({}).expect(405)
      expect(hidden.body.message).toBe('Method `hidden` is not supported by this endpoint.')
      const standard = await http.post('/echo').set('X-Service-Method', 'find').send({}).expect(405)
      expect(standard.body.message).toBe('Method `find` is not supported by this endpoint.')
    })

    it('answers HEAD like GET without a body', async () => {
      const res = await http.head('/messages').expect(200)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(res.text).toBeUndefined()
    })
  })

  describe('status codes and headers', () => {
    it.each(['zero', 'false', 'empty', 'null', 'undefined'])(
      'answers 204 with no body for the falsy result %s',
      async (id) => {
        const res = await http.get(`/echo/${id}`).expect(204)
        expect(res.text).toBe('')
        expect(res.headers['content-type']).toBeUndefined()
      }
    )

    it('sends Allow on service responses and on 405s', async () => {
      const res = await http.get('/readonly/1').expect(200)
      expect(res.headers.allow).toBe('GET,HEAD')
      const put = await http.put('/readonly/1').send({}).expect(405)
      expect(put.headers.allow).toBe('GET,HEAD')
      expect(put.body).toEqual({
        name: 'MethodNotAllowed',
        message: 'Method `update` is not supported by this endpoint.',
        code: 405,
        className: 'method-not-allowed',
        errors: {}
      })
      expect((await http.get('/messages').expect(200)).headers.allow).toBe('GET,HEAD,POST,PUT,PATCH,DELETE')
    })

    it('answers OPTIONS and unknown verbs on a service path with 405', async () => {
      const res = await http.options('/messages').expect(405)
      expect(res.body.message).toBe('Method OPTIONS not allowed')
      expect(res.headers.allow).toBe('GET,HEAD,POST,PUT,PATCH,DELETE')
    })

    it('honours context.http.location with a 303', async () => {
      const res = await http.get('/redirect').expect(303)
      expect(res.headers.location).toBe('/somewhere')
    })
  })

  describe('paths, ids and route parameters', () => {
    it('ignores leading, trailing and duplicate slashes', async () => {
      await http.get('/messages/').expect(200)
      await http.get('//messages').expect(200)
      expect((await http.get('/echo//abc/').expect(200)).body.id).toBe('abc')
    })

    it('is case-sensitive and 404s extra segments', async () => {
      await http.get('/Messages').expect(404)
      await http.get('/messages/1/extra').expect(404)
    })

    it('decodes percent-encoded ids', async () => {
      const res = await http.get(`/echo/${encodeURIComponent('a b/c')}`).expect(200)
      expect(res.body.id).toBe('a b/c')
    })

    it('answers a malformed percent-encoding with 400', async () => {
      const res = await http.get('/echo/%E0%A4%A').expect(400)
      expect(res.body.name).toBe('BadRequest')
    })

    it('fills params.route from path placeholders', async () => {
      const res = await http.get('/users/42/posts/7').expect(200)
      expect(res.body).toMatchObject({ method: 'get', id: '7', route: { userId: '42' } })
      expect((await http.get('/users/a%20b/posts').expect(200)).body.route).toEqual({ userId: 'a b' })
    })
  })

  describe('params as the service sees them', () => {
    it('gives query, provider rest, headers and route only', async () => {
      const res = await http.get('/echo?name=Ann').expect(200)
      expect(res.body).toMatchObject({ query: { name: 'Ann' }, provider: 'rest', route: {} })
      expect(res.body.keys.sort()).toEqual(['headers', 'provider', 'query', 'route'])
    })

    it('hands the peer address for login throttling, not as an own property hooks would copy', async () => {
      const res = await http.get('/echo').expect(200)
      expect(res.body.address).toMatch(/^(::ffff:)?127\.0\.0\.1$/)
      expect(res.body.keys).not.toContain('address')
    })

    it.each([
      ['Bearer abc.def', 'abc.def'],
      ['bearer abc', 'abc'],
      ['JWT abc', 'abc'],
      ['abc.def.ghi', 'abc.def.ghi'],
      ['Bearer', 'Bearer']
    ])('turns Authorization %j into params.authentication', async (header, token) => {
      const res = await http.get('/echo').set('Authorization', header).expect(200)
      expect(res.body.authentication).toEqual({ strategy: 'jwt', accessToken: token })
      expect(res.body.keys).toContain('authentication')
    })

    it('ignores Basic authorization', async () => {
      const res = await http.get('/echo').set('Authorization', 'Basic dXNlcjpwYXNz').expect(200)
      expect(res.body.keys).not.toContain('authentication')
    })

    it('lets a hook refuse external calls by provider and returns its error', async () => {
      const { body } = await http.post('/guarded').send({ a: 1 }).expect(201)
      const res = await http.delete(`/guarded/${body.id}`).expect(403)
      expect(res.body).toEqual({
        name: 'Forbidden',
        message: 'Removing is not allowed from outside',
        code: 403,
        className: 'forbidden',
        data: { provider: 'rest' },
        errors: {}
      })
      await expect(server.app.service('guarded').remove(body.id)).resolves.toEqual(body)
    })
  })

  describe('query strings', () => {
    beforeAll(async () => {
      const people = [
        { name: 'Ann', city: 'Rome', age: '30' },
        { name: 'Bob', city: 'Oslo', age: '40' },
        { name: 'Eve', city: 'Rome', age: '25' },
        { name: 'Dan', city: 'Lima', age: '35' }
      ]
      for (const person of people) await server.app.service('plain').create(person)
    })

    it('keeps every leaf a string and nests brackets', async () => {
      const res = await http.get('/echo?a=1&b[c]=2&t=true&n=null&e=&arr[]=x&arr[]=y&r=1&r=2').expect(200)
      expect(res.body.query).toEqual({
        a: '1',
        b: { c: '2' },
        t: 'true',
        n: 'null',
        e: '',
        arr: ['x', 'y'],
        r: ['1', '2']
      })
    })

    it('decodes percent-encoded keys as the official client sends them', async () => {
      const res = await http.get('/echo?%24limit=2&arr%5B0%5D=1&nested%5B%24gt%5D=5').expect(200)
      expect(res.body.query).toEqual({ $limit: '2', arr: ['1'], nested: { $gt: '5' } })
    })

    it('refuses prototype keys', async () => {
      const res = await http.get('/echo?__proto__[polluted]=1&constructor[prototype][x]=1').expect(200)
      expect(res.body.query.polluted).toBeUndefined()
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    })

    it('filters with $or, $ne, $in and sorts', async () => {
      const or = await http.get('/plain?$or[0][name]=Ann&$or[1][city]=Oslo&$sort[name]=1').expect(200)
      expect(or.body.map((p: { name: string }) => p.name)).toEqual(['Ann', 'Bob'])
      const ne = await http.get('/plain?$or[0][city][$ne]=Rome&$sort[name]=-1&$select[]=name').expect(200)
      expect(ne.body.map((p: { name: string }) => p.name)).toEqual(['Dan', 'Bob'])
      const gt = await http.get('/plain?age[$gt]=29&$sort[age]=1').expect(200)
      expect(gt.body.map((p: { name: string }) => p.name)).toEqual(['Ann', 'Dan', 'Bob'])
    })

    it('keeps a 500-value $in an array', async () => {
      const names = Array.from({ length: 498 }, (_, i) => `nobody${i}`).concat(['Eve', 'Dan'])
      const query = names.map((name, i) => `name[$in][${i}]=${name}`).join('&')
      const res = await http.get(`/plain?${query}&$sort[name]=1`).expect(200)
      expect(res.body.map((p: { name: string }) => p.name)).toEqual(['Dan', 'Eve'])
      const echoed = await http.get(`/echo?${names.map((n) => `v[]=${n}`).join('&')}`).expect(200)
      expect(echoed.body.query.v).toHaveLength(500)
    })

    it('paginates with $limit and $skip', async () => {
      await http
        .post('/plain')
        .send(Array.from({ length: 3 }, () => ({ p: 1 })))
        .expect(405)
      for (let i = 0; i < 12; i++)
        await http
          .post('/messages')
          .send({ text: `page ${i}`, n: i, tag: 'page' })
          .expect(201)
      const res = await http.get('/messages?tag=page&$limit=5&$skip=10').expect(200)
      expect(res.body).toMatchObject({ total: 12, limit: 5, skip: 10 })
      expect(res.body.data).toHaveLength(2)
      expect((await http.get('/messages?$limit=100').expect(200)).body.limit).toBe(50)
    })

    it('answers invalid operators with the v5 400s', async () => {
      expect((await http.get('/plain?$foo=1').expect(400)).body.message).toBe('Invalid filter value $foo')
      const nested = await http.get('/plain?name[$regex]=A').expect(400)
      expect(nested.body).toMatchObject({ message: 'Invalid query parameter $regex', data: { $regex: 'A' } })
    })
  })

  describe('bodies', () => {
    it('parses urlencoded bodies with qs nesting', async () => {
      const res = await http.post('/echo').type('form').send('text=form&nested[a]=1&arr[]=x&arr[]=y').expect(201)
      expect(res.body.data).toEqual({ text: 'form', nested: { a: '1' }, arr: ['x', 'y'] })
    })

    it('treats a missing or non-JSON body as {}', async () => {
      expect((await http.post('/echo').expect(201)).body.data).toEqual({})
      expect((await http.post('/echo').set('Content-Type', 'text/plain').send('hello').expect(201)).body.data).toEqual(
        {}
      )
    })

    it('accepts GET with a JSON content type and no body (superagent)', async () => {
      await http.get('/messages').set('Content-Type', 'application/json').expect(200)
    })

    it('answers malformed JSON with a 400 BadRequest carrying the parser message', async () => {
      const res = await http.post('/echo').set('Content-Type', 'application/json').send('{bad').expect(400)
      expect(res.body).toMatchObject({ name: 'BadRequest', code: 400, className: 'bad-request' })
      expect(res.body.message).toMatch(/JSON/)
      expect(res.body.stack).toBeUndefined()
    })

    it('answers JSON scalars (strict parser) with 400', async () => {
      const res = await http.post('/echo').set('Content-Type', 'application/json').send('"str"').expect(400)
      expect(res.body.name).toBe('BadRequest')
    })

    it('answers bodies above the limit with 413 PayloadTooLarge', async () => {
      const res = await http
        .post('/echo')
        .send({ text: 'x'.repeat(2000) })
        .expect(413)
      expect(res.body).toEqual({
        name: 'PayloadTooLarge',
        message: 'request entity too large',
        code: 413,
        className: 'payload-too-large',
        errors: {}
      })
    })

    it('inflates gzip, deflate and br bodies, within the limit once inflated', async () => {
      const body = JSON.stringify({ text: 'zipped' })
      for (const [encoding, compress] of [
        ['gzip', gzipSync],
        ['deflate', deflateSync],
        ['br', brotliCompressSync]
      ] as const) {
        const res = await postBytes(
          server.url,
          '/echo',
          { 'content-type': 'application/json', 'content-encoding': encoding },
          compress(body)
        )
        expect([encoding, res.status, JSON.parse(res.body).data]).toEqual([encoding, 201, { text: 'zipped' }])
      }
      const bomb = gzipSync(JSON.stringify({ text: 'x'.repeat(5000) }))
      expect(bomb.length).toBeLessThan(1024)
      expect(
        (await postBytes(server.url, '/echo', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, bomb))
          .status
      ).toBe(413)
    })

    it('reads JSON in utf-16 and forms in iso-8859-1, and answers other charsets with 415', async () => {
      const utf16 = await postBytes(
        server.url,
        '/echo',
        { 'content-type': 'application/json; charset=utf-16le' },
        Buffer.from('{"q":"é"}', 'utf16le')
      )
      expect([utf16.status, JSON.parse(utf16.body).data]).toEqual([201, { q: 'é' }])
      const latin1 = await postBytes(
        server.url,
        '/echo',
        { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' },
        Buffer.from('name=Jos\u00e9&x=%E9', 'latin1')
      )
      expect([latin1.status, JSON.parse(latin1.body).data]).toEqual([201, { name: 'José', x: 'é' }])
      const other = await http
        .post('/echo')
        .set('Content-Type', 'application/json; charset=latin1')
        .send('{}')
        .expect(415)
      expect(other.body).toMatchObject({ code: 415, message: 'unsupported charset "LATIN1"' })
      await http
        .post('/echo')
        .set('Content-Type', 'application/x-www-form-urlencoded; charset=utf-16le')
        .send('a=1')
        .expect(415)
    })

    it('answers a body that does not inflate with 400 and an unknown encoding with 415', async () => {
      const broken = await http
        .post('/echo')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .send('not gzip')
        .expect(400)
      expect(broken.body).toMatchObject({ name: 'BadRequest', code: 400 })
      const unknown = await http
        .post('/echo')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'compress')
        .send('{}')
        .expect(415)
      expect(unknown.body).toMatchObject({ code: 415, message: 'unsupported content encoding "compress"' })
    })

    it('answers non-object data with the missing-data messages', async () => {
      const res = await http
        .patch('/messages/1')
        .send([{ a: 1 }])
        .expect(400)
      expect(res.body.message).toBe('No data provided')
    })
  })

  describe('errors and not found', () => {
    it('hides unexpected errors behind a generic 500 without a stack', async () => {
      const res = await http.get('/boom').expect(500)
      expect(res.body).toEqual({
        name: 'GeneralError',
        message: 'Internal server error',
        code: 500,
        className: 'general-error',
        errors: {}
      })
      const thrownString = await http.get('/boom/1').expect(500)
      expect(thrownString.body.message).toBe('Internal server error')
    })

    it('answers unknown paths with 404 Page not found including the query string', async () => {
      const res = await http.get('/nope?x=1').expect(404)
      expect(res.body).toEqual({
        name: 'NotFound',
        message: 'Page not found',
        code: 404,
        className: 'not-found',
        data: { url: '/nope?x=1' },
        errors: {}
      })
      await http.post('/nope').send({}).expect(404)
    })
  })
})

/** A POST with a binary body, written as is (supertest would re-encode a Buffer from node's own zlib). */
function postBytes(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: Uint8Array
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: hostname, port, method: 'POST', path, headers: { ...headers, 'content-length': String(body.length) } },
      (res) => {
        let text = ''
        res.on('data', (chunk) => {
          text += String(chunk)
        })
        res.on('end', () => resolve({ status: res.statusCode!, body: text }))
      }
    )
    req.on('error', reject)
    req.end(body)
  })
}
