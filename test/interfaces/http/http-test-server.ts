import { afterEach } from '@jest/globals'
import request from 'supertest'
import { AdapterService } from '../../../src/application/adapter-service.js'
import type { App } from '../../../src/application/app.js'
import type { HookContext } from '../../../src/application/hook-context.js'
import { allHttpEngines } from '../../support/http-engines.js'
import { Forbidden } from '../../../src/domain/errors/errors.js'
import type { Params } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { InMemoryStoreFactory } from '../../../src/infrastructure/memory/in-memory-store-factory.js'
import { InMemoryUniqueKeys } from '../../../src/infrastructure/memory/in-memory-unique-keys.js'
import { AjvSchemaValidator } from '../../../src/infrastructure/schema/ajv-schema-validator.js'
import { fastifyEngine, type FastifyAppOptions } from '../../../src/interfaces/fastify/fastify-app.js'
import type { HttpAppOptions, HttpEngine } from '../../../src/interfaces/http/http-engine.js'
import { expressEngine, type RestAppOptions } from '../../../src/interfaces/rest/rest-app.js'
import { createReferenceApp } from '../../../src/reference-app.js'

/** Every HTTP engine the composition root can choose: each REST suite runs once per engine. */
export const ENGINES = Object.keys(await allHttpEngines()) as Engine[]
export type Engine = 'express' | 'fastify'

/** Options of one engine: the shared ones, plus what only that engine takes (its formatter's type). */
export type EngineOptions<E extends Engine = Engine> = E extends 'express'
  ? RestAppOptions
  : E extends 'fastify'
    ? FastifyAppOptions
    : HttpAppOptions

/** Each engine with its own options type (a new engine in the composition root must be added here). */
const engines: { [E in Engine]: (app: App, options: EngineOptions<E>) => HttpEngine } = {
  express: expressEngine,
  fastify: fastifyEngine
}

export interface TestServer {
  app: App
  url: string
  close(): Promise<void>
}

/** Answers with what the transport handed over, so tests can see params, ids and data as the service does. */
export class EchoService {
  async find(params: Params) {
    return {
      method: 'find',
      query: params.query,
      provider: params.provider,
      route: params.route,
      keys: Object.keys(params),
      address: params.address,
      authentication: params.authentication
    }
  }
  async get(id: string, params: Params) {
    const falsy: Record<string, unknown> = { zero: 0, false: false, empty: '', null: null, undefined }
    if (id in falsy) return falsy[id]
    return { method: 'get', id, route: params.route, headers: params.headers }
  }
  async create(data: unknown, params: Params) {
    return { method: 'create', data, query: params.query }
  }
  async update(id: string, data: unknown) {
    return { method: 'update', id, data }
  }
  async patch(id: string | null, data: unknown) {
    return { method: 'patch', id, data }
  }
  async remove(id: string | null, params: Params) {
    return { method: 'remove', id, query: params.query }
  }
  async shout(data: { text?: string }, params: Params) {
    return { shouted: String(data.text).toUpperCase(), query: params.query }
  }
  async hidden() {
    return 'never reachable'
  }
}

/**
 * The reference app (messages, users) plus services covering every row of docs/wire-protocol.md, REST,
 * served by the real HTTP adapter of `engine` on 127.0.0.1:0.
 */
export async function startHttpServer<E extends Engine>(
  engine: E,
  options: EngineOptions<E> = {} as EngineOptions<E>
): Promise<TestServer> {
  const app = createReferenceApp({
    stores: new InMemoryStoreFactory(),
    validator: new AjvSchemaValidator(),
    uniqueKeys: new InMemoryUniqueKeys()
  })
  app.use('echo', new EchoService(), { methods: ['find', 'get', 'create', 'update', 'patch', 'remove', 'shout'] })
  app.use('multi', new AdapterService(new InMemoryStore(), { multi: true }))
  app.use('plain', new AdapterService(new InMemoryStore()))
  app.use('readonly', {
    async get(id: string) {
      return { id }
    }
  })
  app.use('users/:userId/posts', new EchoService(), { methods: ['find', 'get'] })
  app.use('boom', {
    async find() {
      throw new Error('Secret internal detail')
    },
    async get() {
      throw 'a thrown string'
    }
  })
  app.use('redirect', {
    async find() {
      return { ok: true }
    }
  })
  app.service('redirect').hooks({
    after: {
      find: [
        (context: HookContext) => {
          context.http.location = '/somewhere'
        }
      ]
    }
  })
  app.use('guarded', new AdapterService(new InMemoryStore(), { multi: true }))
  app.service('guarded').hooks({
    before: {
      remove: [
        (context: HookContext) => {
          if (context.params.provider === 'rest')
            throw new Forbidden('Removing is not allowed from outside', { provider: context.params.provider })
        }
      ]
    }
  })
  await app.setup()
  const http = (engines[engine] as (app: App, options: EngineOptions<E>) => HttpEngine)(app, options)
  const running = await http.listen(0, '127.0.0.1')
  return {
    app,
    url: running.url,
    async close() {
      await running.close()
      await app.teardown()
    }
  }
}

/**
 * For suites that start a differently configured server per test: `start(options)` starts one on
 * `engine` and returns a supertest agent for it; each is closed after its test.
 */
export function serverPerTest<E extends Engine>(
  engine: E
): (options?: EngineOptions<E>) => Promise<ReturnType<typeof request>> {
  let server: TestServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })
  return async (options) => {
    server = await startHttpServer(engine, options)
    return request(server.url)
  }
}
