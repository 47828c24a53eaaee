/**
 * The cost of rules on event fan-out (README "Rules"): one event published to 10,000 connections, through the
 * kernel's delivery stage, without rules and with three rule sets — rules that depend on the role only (users
 * share a handful of groups), the chat's (messages.rules.ts: conditions on the user's id, so one group per user),
 * and role rules that hide a field (a projection per group). Measured in process, up to the deliveries the
 * transport encodes (no sockets): the work rules add per event. `npm run bench:rules-fanout`.
 */
import { AdapterService } from '../src/application/adapter-service.js'
import { App } from '../src/application/app.js'
import { useRules, type RulesDefinition } from '../src/application/rules/index.js'
import { Gateway } from '../src/application/transport/gateway.js'
import type { Connection } from '../src/domain/service/service.js'
import { InMemoryStore } from '../src/infrastructure/memory/in-memory-store.js'
import { messagesRules } from '../src/services/messages/messages.rules.js'

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10_000)
const EVENTS = Number(process.env.EVENTS ?? 200)
const schemas = {
  result: { type: 'object', properties: { id: {}, text: {}, userId: {}, to: {}, secret: {} } }
} as const

const variants: Record<string, RulesDefinition | undefined> = {
  'no rules': undefined,
  'role rules (4 groups)': (user, { can }) => {
    if (!user) return
    can('read', 'messages', { to: null })
    if (user.role === 'admin') can('read', 'messages')
  },
  'role rules hiding a field (4 groups)': (user, { can, cannot }) => {
    if (!user) return
    can('read', 'messages', { to: null })
    if (user.role !== 'admin') cannot('read', 'messages', ['secret'])
  },
  "the chat's rules (a group per user)": messagesRules
}

async function run(name: string, definition: RulesDefinition | undefined) {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()), { schemas })
  if (definition) useRules(app, { messages: definition })
  const gateway = new Gateway(app)
  let delivered = 0
  let done: () => void = () => undefined
  gateway.onDelivery((delivery) => {
    delivered += delivery.connections.length
    if (delivered >= CONNECTIONS * EVENTS * 0.99) done()
  })
  app.publish(() => app.channel('everyone'))
  await app.setup()
  for (let i = 0; i < CONNECTIONS; i++) {
    const connection: Connection = { provider: 'socketio', user: { id: i, role: ['a', 'b', 'c', 'admin'][i % 4] } }
    gateway.open(connection)
    app.channel('everyone').join(connection)
  }
  // The first event builds each user's rules (once per user, then cached): timed apart from the steady state.
  const first = process.hrtime.bigint()
  await app.service('messages').create({ text: 'warm-up', userId: 1, secret: 's' })
  while (delivered < CONNECTIONS * 0.99) await new Promise((resolve) => setImmediate(resolve))
  const firstMs = Number(process.hrtime.bigint() - first) / 1e6
  delivered = 0
  const finished = new Promise<void>((resolve) => (done = resolve))
  const started = process.hrtime.bigint()
  for (let i = 0; i < EVENTS; i++) await app.service('messages').create({ text: `m${i}`, userId: 1, secret: 's' })
  await finished
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  console.log(
    `${name.padEnd(40)} ${(ms / EVENTS).toFixed(2).padStart(8)} ms/event  ` +
      `${((ms * 1000) / EVENTS / CONNECTIONS).toFixed(3)} µs/connection  (first event: ${firstMs.toFixed(0)} ms)`
  )
}

console.log(`one event to ${CONNECTIONS} connections, ${EVENTS} events, in process (no sockets)`)
for (const [name, definition] of Object.entries(variants)) await run(name, definition)
