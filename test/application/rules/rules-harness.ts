import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import type { Delivery } from '../../../src/application/channel.js'
import { useRules, type RulesDefinition } from '../../../src/application/rules/index.js'
import { Gateway } from '../../../src/application/transport/gateway.js'
import type { Connection } from '../../../src/domain/service/service.js'
import type { Store } from '../../../src/domain/store/store.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'

/** The fields of a note, the guarded service of these tests. */
export const NOTE_FIELDS = ['id', 'text', 'ownerId', 'to', 'level', 'secret'] as const

export const noteSchemas = {
  result: {
    type: 'object',
    properties: Object.fromEntries(NOTE_FIELDS.map((field) => [field, {}])),
    additionalProperties: true
  }
} as const

export type Note = Record<string, unknown>

/**
 * An app with one guarded service, `notes`, over `store` (memory unless given), a gateway whose connections are
 * all in one channel that every event goes to, and every delivery kept: rules are then seen at work on calls and
 * events without a transport.
 */
export async function rulesApp(
  definitions: Record<string, RulesDefinition>,
  store: Store<Note> = new InMemoryStore<Note>()
) {
  const app = new App()
  app.use('notes', new AdapterService(store, { multi: true, paginate: { default: 1000, max: 1000 } }), {
    schemas: noteSchemas
  })
  useRules(app, definitions)
  const gateway = new Gateway(app)
  const deliveries: Delivery[] = []
  gateway.onDelivery((delivery) => deliveries.push(delivery))
  app.on('connection', (connection: Connection) => app.channel('everyone').join(connection))
  app.publish(() => app.channel('everyone'))
  await app.setup()
  const connect = (user?: Record<string, unknown>): Connection => {
    const connection: Connection = { provider: 'socketio', ...(user ? { user } : {}) }
    gateway.open(connection)
    return connection
  }
  /** Resolves once the deliveries of every event published so far have been handed on (stages are async). */
  const settled = async () => {
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve))
  }
  return { app, notes: app.service('notes') as unknown as AdapterService<Note>, deliveries, connect, settled }
}

/** Params of an external call by `user`, as a transport makes them. */
export const as = (user: Record<string, unknown> | undefined, query?: Record<string, unknown>) => ({
  provider: 'socketio',
  ...(user ? { user } : {}),
  ...(query ? { query } : {})
})
