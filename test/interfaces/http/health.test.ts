import { describe, expect, it } from '@jest/globals'
import { readFile } from 'node:fs/promises'
import { App } from '../../../src/application/app.js'
import { buildContainer, httpAppOptions } from '../../../src/container.js'
import { silentLogger } from '../../../src/domain/logger.js'
import { loadConfig } from '../../../src/infrastructure/config/config.js'
import type { HealthOptions } from '../../../src/interfaces/http/health.js'
import { ENGINES, serverPerTest } from './http-test-server.js'

describe.each(ENGINES)('GET /health on %s', (engine) => {
  const startWith = serverPerTest(engine)
  const start = (health: HealthOptions) => startWith({ health })

  it('answers 200 ok with the version while the store is reachable, without a token', async () => {
    const response = await (
      await start({ version: '1.2.3', check: async () => ({ ready: true, checks: { reachable: true }, problems: [] }) })
    )
      .get('/health')
      .expect(200)
    expect(response.body).toEqual({ status: 'ok', store: { reachable: true }, version: '1.2.3' })
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
  })

  it('answers 503 degraded when the store is unreachable', async () => {
    const response = await (
      await start({
        version: '1.2.3',
        check: async () => ({ ready: false, checks: { reachable: false }, problems: ['RethinkDB does not answer'] })
      })
    )
      .get('/health')
      .expect(503)
    expect(response.body).toEqual({
      status: 'degraded',
      store: { reachable: false },
      version: '1.2.3',
      problems: ['RethinkDB does not answer']
    })
  })

  it('answers 503 naming the parts that are not ready while the store is reachable', async () => {
    const check = async () => ({
      ready: false,
      checks: { reachable: true, writable: true, feeds: false },
      problems: ['change feeds are not live: messages']
    })
    const response = await (await start({ version: '1', check })).get('/health').expect(503)
    expect(response.body).toEqual({
      status: 'degraded',
      store: { reachable: true, writable: true, feeds: false },
      version: '1',
      problems: ['change feeds are not live: messages']
    })
  })

  it('treats a ping that throws as unreachable instead of failing the probe', async () => {
    const http = await start({ version: '1', check: () => Promise.reject(new Error('connection reset')) })
    const response = await http.get('/health').expect(503)
    expect(response.body.status).toBe('degraded')
    expect(JSON.stringify(response.body)).not.toContain('connection reset')
  })

  it('answers HEAD like GET and leaves other methods to the rest of the app', async () => {
    const http = await start({
      version: '1',
      check: async () => ({ ready: true, checks: { reachable: true }, problems: [] })
    })
    await http.head('/health').expect(200)
    const post = await http.post('/health').send({}).expect(404)
    expect(post.body.name).toBe('NotFound')
    await http.get('/health/').expect(404)
  })

  it('is mounted by the composition root with the memory store and the package.json version', async () => {
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { version: string }
    const container = await buildContainer(loadConfig({ NODE_ENV: 'test' }), { logger: silentLogger })
    const options = httpAppOptions(container, container.get<App>(App))
    const response = await (await start(options.health!)).get('/health').expect(200)
    expect(response.body).toEqual({ status: 'ok', store: { reachable: true }, version: pkg.version })
  })
})
