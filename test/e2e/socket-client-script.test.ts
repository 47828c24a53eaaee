import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { get } from 'node:http'
import { join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import type { Browser } from 'playwright-core'
import { startAuthServer, type AuthServer } from '../support/auth-server.js'
import { buildServer, type BuiltServer } from '../support/built-server.js'
import { CHROMIUM, withChromium } from '../support/chromium.js'

/*
 * An unchanged Feathers chat frontend loads the socket.io client from the server it talks to
 * (`<script src="/socket.io/socket.io.js">`): the server serves it, and its variants, on either HTTP
 * engine and from the bundle `npm start` runs — the client of the socket.io release the server runs,
 * compressed once rather than for every request (src/interfaces/socketio/client-script.ts).
 */
const socketIo = join(process.cwd(), 'node_modules', 'socket.io')
const version = (JSON.parse(readFileSync(join(socketIo, 'package.json'), 'utf8')) as { version: string }).version
const onDisk = (file: string) => readFileSync(join(socketIo, 'client-dist', file))

describe.each(['express', 'fastify'])('GET /socket.io/socket.io.js on %s', (engine) => {
  let server: AuthServer
  beforeAll(async () => {
    server = await startAuthServer({ HTTP: engine })
  })
  afterAll(() => server.close())

  it('answers 200 with the client script of the socket.io release the server runs', async () => {
    const response = await fetch(`${server.url}/socket.io/socket.io.js`, { headers: { 'accept-encoding': 'identity' } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
    expect(response.headers.get('etag')).toBe(`"${version}"`)
    const script = await response.text()
    expect(script).toContain(`Socket.IO v${version}`)
    expect(script).toBe(onDisk('socket.io.js').toString())
    // The client the tests run in Node is the same release.
    expect(JSON.parse(readFileSync(join(process.cwd(), 'node_modules/socket.io-client/package.json'), 'utf8'))).toEqual(
      expect.objectContaining({ version })
    )
  })

  it.each([
    ['socket.io.min.js', 'application/javascript'],
    ['socket.io.js.map', 'application/json'],
    ['socket.io.min.js.map', 'application/json'],
    ['socket.io.esm.min.js', 'application/javascript']
  ])('serves %s, compressed as the client asks (br, gzip or none)', async (file, type) => {
    const url = `${server.url}/socket.io/${file}?v=1`
    const br = await fetch(url, { headers: { 'accept-encoding': 'gzip, deflate, br' } })
    expect([br.status, br.headers.get('content-encoding'), br.headers.get('vary')]).toEqual([
      200,
      'br',
      'Accept-Encoding'
    ])
    expect(br.headers.get('content-type')).toBe(`${type}; charset=utf-8`)
    // fetch inflates what it receives; the raw bytes are compared below with node's own request.
    expect(Buffer.from(await br.arrayBuffer()).equals(onDisk(file))).toBe(true)
    const raw = (encoding: string) =>
      new Promise<Buffer>((resolve, reject) => {
        get(url, { headers: { 'accept-encoding': encoding } }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks)))
        }).on('error', reject)
      })
    expect(brotliDecompressSync(await raw('br')).equals(onDisk(file))).toBe(true)
    expect(gunzipSync(await raw('gzip;q=1, br;q=0')).equals(onDisk(file))).toBe(true)
    expect((await raw('identity')).equals(onDisk(file))).toBe(true)
  })

  it('answers 304 to a client that has the same version, and HEAD without a body', async () => {
    const cached = await fetch(`${server.url}/socket.io/socket.io.js`, {
      headers: { 'if-none-match': `W/"${version}"` }
    })
    expect(cached.status).toBe(304)
    const head = await fetch(`${server.url}/socket.io/socket.io.js`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
  })

  it('leaves other requests under /socket.io/ to engine.io (the msgpack build, a POST)', async () => {
    for (const [method, file] of [
      ['GET', 'socket.io.msgpack.min.js'],
      ['POST', 'socket.io.js']
    ]) {
      const response = await fetch(`${server.url}/socket.io/${file}`, { method })
      expect(response.status).toBe(400)
      await expect(response.json()).resolves.toEqual({ code: 0, message: 'Transport unknown' })
    }
  })

  it('compresses a file once, not per request: 20 brotli answers cost less CPU than one brotli compression', async () => {
    const url = `${server.url}/socket.io/socket.io.js.map`
    const get = () => fetch(url, { headers: { 'accept-encoding': 'br' } }).then((response) => response.arrayBuffer())
    await get()
    const before = process.cpuUsage()
    for (let n = 0; n < 20; n++) await get()
    const { user, system } = process.cpuUsage(before)
    // socket.io's serveClient spends ~0.6 s compressing this map for every request (~12 s for 20).
    expect((user + system) / 1000).toBeLessThan(500)
  })
})

describe('the server bundle `npm start` runs', () => {
  let built: BuiltServer
  beforeAll(async () => {
    built = await buildServer('client-script')
  }, 60_000)
  afterAll(() => built.cleanup())

  it('serves /socket.io/socket.io.js and keeps running', async () => {
    const { port, exited } = await built.start({ AUTH_SECRET: 'client-script-test-secret' })
    const response = await fetch(`http://127.0.0.1:${port}/socket.io/socket.io.js`)
    expect(response.status).toBe(200)
    expect(await response.text()).toContain(`Socket.IO v${version}`)
    const health = await fetch(`http://127.0.0.1:${port}/health`)
    expect(health.status).toBe(200)
    const state = await Promise.race([exited.then(() => 'exited'), Promise.resolve('running')])
    expect(state).toBe('running')
  }, 30_000)
})

withChromium('a page using the served client in Chromium', () => {
  let server: AuthServer
  let browser: Browser
  beforeAll(async () => {
    server = await startAuthServer({ HTTP: 'express' })
    const { chromium } = await import('playwright-core')
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it('connects with io() and gets an answer to a Feathers call', async () => {
    const page = await browser.newPage()
    // Any page of the server's origin: the HTML is made up here, the script comes from the server.
    await page.route(`${server.url}/io.html`, (route) =>
      route.fulfill({ contentType: 'text/html', body: '<script src="/socket.io/socket.io.js"></script>' })
    )
    await page.goto(`${server.url}/io.html`)
    const answer = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const socket = (window as unknown as { io: () => { emit(...args: unknown[]): void } }).io()
          socket.emit('find', 'messages', {}, (error: { name: string }) => resolve(error.name))
        })
    )
    // The round trip went through socket.io: the messages service refuses an anonymous connection.
    expect(answer).toBe('NotAuthenticated')
  })
})
