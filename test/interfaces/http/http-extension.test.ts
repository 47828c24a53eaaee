import { describe, expect, it } from '@jest/globals'
import type { Server } from 'node:http'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { HttpExtension } from '../../../src/interfaces/http/http-extension.js'
import { serviceRoute } from '../../../src/interfaces/http/service-route.js'
import { ENGINES, serverPerTest } from './http-test-server.js'

/** A pino logger writing into `lines`, for the request log. */
function logInto(lines: string[]) {
  return pino(
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk))
        done()
      }
    })
  )
}

const logged = (lines: string[]) =>
  lines
    .filter((line) => line.includes('request completed'))
    .map((line) => (JSON.parse(line) as { req: { url: string } }).req.url)

describe.each(ENGINES)('HTTP extensions on %s', (engine) => {
  const start = serverPerTest(engine)

  it('serves exact and prefix routes on GET and HEAD, before the services, and request-logs only loud ones', async () => {
    const lines: string[] = []
    const extension: HttpExtension = {
      routes: () => [
        { path: '/ping', quiet: true, handle: (_req, res) => void res.end('pong') },
        { path: '/files/', prefix: true, handle: (req, res) => void res.end(`file ${req.url}`) },
        // The same path as a service: the extension's route wins.
        { path: '/messages', quiet: true, handle: (_req, res) => void res.end('not the service') }
      ]
    }
    const http = await start({ extensions: [extension], requestLog: logInto(lines) })
    expect((await http.get('/ping?x=1').expect(200)).text).toBe('pong')
    expect((await http.get('/files/a/b.txt').expect(200)).text).toBe('file /files/a/b.txt')
    await http.head('/ping').expect(200)
    expect((await http.get('/messages').expect(200)).text).toBe('not the service')
    // Other verbs reach the services (here: no such service, 404).
    await http.post('/ping').send({}).expect(404)
    expect(logged(lines)).toEqual(['/files/a/b.txt', '/ping'])
  })

  it("answers a route's failure with the error envelope", async () => {
    const failing: HttpExtension = {
      routes: () => [
        {
          path: '/fails',
          quiet: true,
          handle: () => {
            throw new Error('secret detail')
          }
        }
      ]
    }
    const http = await start({ extensions: [failing] })
    const res = await http.get('/fails').expect(500)
    expect(res.body).toMatchObject({ name: 'GeneralError', code: 500 })
    expect(res.text).not.toContain('secret')
  })

  it('wraps the request listener, attaches to the server before it listens, and marks service routes on request', async () => {
    const seen: string[] = []
    const routes: (string | undefined)[] = []
    let attached: { listening: boolean; paths: readonly string[] } | undefined
    const extension: HttpExtension = {
      routes: () => [{ path: '/own', handle: (_req, res) => void res.end() }],
      wrap: (listener) => (req, res) => {
        seen.push(req.url!)
        res.on('finish', () => routes.push(serviceRoute(res)))
        listener(req, res)
      },
      attach: (server: Server, paths) => {
        attached = { listening: server.listening, paths }
      },
      readsServiceRoutes: true
    }
    const http = await start({ extensions: [extension], health: { version: '1', check: async () => healthy } })
    await http.get('/messages/1').expect(404)
    await http.get('/messages').expect(200)
    await http.get('/own').expect(200)
    expect(seen).toEqual(['/messages/1', '/messages', '/own'])
    expect(routes).toEqual(['/messages/:id', '/messages', undefined])
    expect(attached).toEqual({ listening: false, paths: ['/health', '/own'] })
  })

  it('leaves service responses unmarked when no extension reads their routes', async () => {
    const routes: (string | undefined)[] = []
    const extension: HttpExtension = {
      wrap: (listener) => (req, res) => {
        res.on('finish', () => routes.push(serviceRoute(res)))
        listener(req, res)
      }
    }
    const http = await start({ extensions: [extension] })
    await http.get('/messages').expect(200)
    expect(routes).toEqual([undefined])
  })
})

const healthy = { ready: true, checks: { reachable: true }, problems: [] }
