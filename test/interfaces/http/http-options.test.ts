import { describe, expect, it } from '@jest/globals'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { Logger } from '../../../src/domain/logger.js'
import type { FastifyFormatter } from '../../../src/interfaces/fastify/fastify-app.js'
import type { Formatter } from '../../../src/interfaces/rest/service-middleware.js'
import { ENGINES, serverPerTest, type EngineOptions } from './http-test-server.js'

type Row = { id?: unknown; text?: unknown }
const csvOf = (data: unknown) => {
  const page = data as { data?: Row[] } & Row
  return (page.data ?? [page]).map((row) => `${row.id},${row.text}`).join('\n')
}

/** The same negotiation (JSON by default, CSV on `Accept: text/csv`) written for each engine's formatter. */
const csvFormatters: { express: Formatter; fastify: FastifyFormatter } = {
  express: (_req, res) =>
    res.format({
      'application/json': () => res.json(res.data),
      'text/csv': () => res.send(csvOf(res.data))
    }),
  fastify: (request, reply, data) =>
    request.headers.accept === 'text/csv' ? reply.type('text/csv; charset=utf-8').send(csvOf(data)) : data
}

describe.each(ENGINES)('%s options', (engine) => {
  const start = serverPerTest(engine)

  describe('formatter', () => {
    it('lets a custom formatter negotiate text/csv from the result', async () => {
      const http = await start({ formatter: csvFormatters[engine] } as EngineOptions<typeof engine>)
      await http.post('/messages').send({ text: 'a' }).expect(201)
      await http.post('/messages').send({ text: 'b' }).expect(201)
      const csv = await http.get('/messages').set('Accept', 'text/csv').expect(200)
      expect(csv.headers['content-type']).toMatch(/^text\/csv/)
      expect(csv.text).toBe('0,a\n1,b')
      const json = await http.get('/messages').expect(200)
      expect(json.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(json.body.total).toBe(2)
      const created = await http.post('/messages').set('Accept', 'text/csv').send({ text: 'c' }).expect(201)
      expect(created.text).toBe('2,c')
    })

    it('answers with the 500 envelope when the formatter throws, and goes on serving', async () => {
      const broken = () => {
        throw new Error('formatter broke')
      }
      const http = await start({ formatter: broken } as EngineOptions<typeof engine>)
      const res = await http.get('/messages').expect(500)
      expect(res.body).toMatchObject({ name: 'GeneralError', code: 500, className: 'general-error' })
      expect(JSON.stringify(res.body)).not.toContain('formatter broke')
      await http.post('/messages').send({ text: 'a' }).expect(500)
    })
  })

  describe('optional middleware', () => {
    it('adds no CORS headers by default', async () => {
      const http = await start({})
      const res = await http.get('/messages').set('Origin', 'http://app.example').expect(200)
      expect(res.headers['access-control-allow-origin']).toBeUndefined()
    })

    it('answers CORS preflights with 204 for configured origins only', async () => {
      const http = await start({ corsOrigins: ['http://app.example'] })
      const preflight = await http
        .options('/messages')
        .set('Origin', 'http://app.example')
        .set('Access-Control-Request-Method', 'PATCH')
        .expect(204)
      expect(preflight.headers['access-control-allow-origin']).toBe('http://app.example')
      expect(preflight.headers['access-control-allow-credentials']).toBe('true')
      expect(preflight.headers['access-control-allow-methods']).toContain('PATCH')
      const allowed = await http.get('/messages').set('Origin', 'http://app.example').expect(200)
      expect(allowed.headers['access-control-allow-origin']).toBe('http://app.example')
      // Read your writes: browser code may read a write's offset header.
      expect(allowed.headers['access-control-expose-headers']).toBe('Plumage-Offset')
      const other = await http.get('/messages').set('Origin', 'http://evil.example').expect(200)
      expect(other.headers['access-control-allow-origin']).toBeUndefined()
    })

    it('allows any origin with *', async () => {
      const http = await start({ corsOrigins: ['*'] })
      const res = await http.get('/messages').set('Origin', 'http://any.example').expect(200)
      expect(res.headers['access-control-allow-origin']).toBe('http://any.example')
    })

    it('compresses large responses when enabled', async () => {
      const http = await start({ compression: true })
      for (let i = 0; i < 10; i++)
        await http
          .post('/messages')
          .send({ text: 'x'.repeat(200) })
          .expect(201)
      const res = await http.get('/messages').set('Accept-Encoding', 'gzip').expect(200)
      expect(res.headers['content-encoding']).toBe('gzip')
      expect(res.body.total).toBe(10)
      const small = await http.get('/messages/0').set('Accept-Encoding', 'gzip').expect(200)
      expect(small.headers['content-encoding']).toBeUndefined()
    })

    it('serves static files after the services', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'plumage-static-'))
      try {
        await writeFile(join(dir, 'index.html'), '<h1>chat</h1>')
        await writeFile(join(dir, 'messages'), 'shadowed by the service')
        await writeFile(join(dir, 'app one.js'), 'one()')
        await writeFile(join(dir, '.secret'), 'hidden')
        const http = await start({ staticDir: dir })
        const page = await http.get('/').expect(200)
        expect(page.text).toBe('<h1>chat</h1>')
        expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
        expect((await http.get('/app%20one.js').expect(200)).text).toBe('one()')
        expect((await http.get('/messages').expect(200)).body).toMatchObject({ total: 0 })
        const missing = await http.get('/missing.css').expect(404)
        expect(missing.body).toMatchObject({
          name: 'NotFound',
          message: 'Page not found',
          data: { url: '/missing.css' }
        })
        await http.get('/.secret').expect(404)
        await http.post('/index.html').send({}).expect(404)
      } finally {
        await rm(dir, { recursive: true })
      }
    })

    it('logs one line per request through pino when enabled', async () => {
      const lines: string[] = []
      const sink = new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk))
          done()
        }
      })
      const http = await start({ requestLog: pino(sink) })
      await http.get('/messages?x=1').expect(200)
      const completed = lines.filter((line) => line.includes('request completed'))
      expect(completed).toHaveLength(1)
      expect(JSON.parse(completed[0]!)).toMatchObject({
        req: { method: 'GET', url: '/messages?x=1' },
        res: { statusCode: 200 }
      })
    })

    it('logs requests without a query string too (express reads no query as null)', async () => {
      const lines: string[] = []
      const sink = new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk))
          done()
        }
      })
      const http = await start({ requestLog: pino(sink) })
      await http.post('/messages').send({ text: 'logged' }).expect(201)
      const completed = lines.filter((line) => line.includes('request completed'))
      expect(completed.map((line) => JSON.parse(line) as unknown)).toMatchObject([
        { req: { method: 'POST', url: '/messages' }, res: { statusCode: 201 } }
      ])
    })
  })

  describe('errors', () => {
    it('logs the real error of an unexpected failure and sends only the generic message', async () => {
      const logged: [string, Record<string, unknown> | undefined][] = []
      const logger: Logger = {
        debug() {},
        info() {},
        warn() {},
        error: (message, details) => logged.push([message, details])
      }
      const http = await start({ logger })
      const res = await http.get('/boom').expect(500)
      expect(JSON.stringify(res.body)).not.toContain('Secret')
      expect(logged).toHaveLength(1)
      expect(logged[0]![0]).toBe('Unexpected error in GET /boom')
      expect(logged[0]![1]).toMatchObject({ error: { message: 'Secret internal detail' } })
    })

    it('without body parsers, create/update/patch get the missing-data messages', async () => {
      const http = await start({ bodyParsers: false })
      const create = await http.post('/messages').send({ text: 'x' }).expect(400)
      expect(create.body.message).toBe("First parameter for 'create' must be an object")
      expect((await http.patch('/messages/0').send({ text: 'x' }).expect(400)).body.message).toBe('No data provided')
      expect((await http.put('/messages/0').send({ text: 'x' }).expect(400)).body.message).toBe('No data provided')
    })
  })
})
