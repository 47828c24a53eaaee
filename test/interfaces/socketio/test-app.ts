import { AdapterService } from '../../../src/application/adapter-service.js'
import type { App } from '../../../src/application/app.js'
import type { Data, Params } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { InMemoryStoreFactory } from '../../../src/infrastructure/memory/in-memory-store-factory.js'
import { InMemoryUniqueKeys } from '../../../src/infrastructure/memory/in-memory-unique-keys.js'
import { AjvSchemaValidator } from '../../../src/infrastructure/schema/ajv-schema-validator.js'
import { createReferenceApp } from '../../../src/reference-app.js'
import { useFakeAuthentication } from './support.js'

/** A gate a slow service waits on, so tests decide when in-flight calls finish. */
export class Gate {
  private release!: () => void
  readonly opened = new Promise<void>((resolve) => {
    this.release = resolve
  })
  open(): void {
    this.release()
  }
}

/**
 * The reference app (messages, users, default channels) with the fake authentication and the protocol services below.
 */
export function createSocketTestApp(options: { lifetimeMs?: number } = {}) {
  const app = createReferenceApp({
    stores: new InMemoryStoreFactory(),
    validator: new AjvSchemaValidator(),
    uniqueKeys: new InMemoryUniqueKeys()
  })
  useFakeAuthentication(app, options)
  const gate = useProtocolServices(app)
  return { app: app as App, gate }
}

/**
 * Services exercising the socket protocol, added to any app (also the real reference app in the e2e
 * tests): `multi` (multi: true, no pagination), `echo` (returns what the service saw), `custom`
 * (custom method and event), `broken`, `slow` (waits on the returned gate) and a routed service.
 */
export function useProtocolServices(app: App): { current: Gate } {
  app.use('multi', new AdapterService(new InMemoryStore(), { multi: true }))
  app.use('echo', {
    async find(params: Params) {
      const { connection: _connection, ...rest } = params
      return { keys: Object.keys(params), ...rest, hasConnection: params.connection !== undefined }
    },
    async get(id: unknown, params: Params) {
      return { id, query: params.query }
    },
    async remove() {
      return undefined
    },
    async patch() {
      return 0
    }
  })
  app.use(
    'custom',
    {
      async get(id: unknown) {
        return { id }
      },
      async shout(this: { emit(event: string, data: unknown): boolean }, data: Data) {
        this.emit('boom', { loud: data.text })
        return { shouted: true }
      }
    },
    { methods: ['get', 'shout'], events: ['boom'] }
  )
  app.use('broken', {
    async find() {
      throw new Error('Secret internal detail')
    }
  })
  const gate = { current: new Gate() }
  app.use('slow', {
    async find() {
      await gate.current.opened
      return []
    }
  })
  app.use('users/:userId/posts', {
    async find(params: Params) {
      return params.route
    }
  })
  return gate
}
