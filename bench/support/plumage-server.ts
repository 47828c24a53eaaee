import { AdapterService } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import { validateSchemas } from '../../src/application/schema/validate-schemas.js'
import { noMetrics } from '../../src/domain/metrics.js'
import { createHash } from 'node:crypto'
import { idempotencyHooks } from '../../src/application/idempotency/index.js'
import { InMemoryKeyedWrites } from '../../src/infrastructure/memory/in-memory-keyed-writes.js'
import { clone, InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { MeasuredStore } from '../../src/infrastructure/metrics/measured-store.js'
import { metricsExtension, PrometheusMetrics } from '../../src/infrastructure/metrics/index.js'
import { AjvSchemaValidator } from '../../src/infrastructure/schema/ajv-schema-validator.js'
import { loadConfig } from '../../src/infrastructure/config/config.js'
import type { HttpEngineFactory } from '../../src/container.js'
import { fastifyEngine } from '../../src/interfaces/fastify/fastify-app.js'
import { httpMetrics } from '../../src/interfaces/http-metrics/index.js'
import { expressEngine } from '../../src/interfaces/rest/rest-app.js'
import { socketIoTransport } from '../../src/interfaces/socketio/socketio-transport.js'
import { benchMessageSchemas } from './message-schemas.js'
import { announce, seedRecords } from './seed.js'
import { addAuthentication } from './plumage-auth.js'

/**
 * plumage as `npm start` serves it (REST + socket.io): messages on the memory store, paginate 10/50,
 * open, validated by the reference app's schemas; `secure` the same behind a JWT (plumage-auth.ts).
 * On the HTTP engine the `HTTP` variable names (express by default), as `npm start` chooses it.
 * Metrics only with METRICS=true (the rows against Feathers compare the app without them): then
 * measured as the composition root measures them — requests, service calls, events, store queries.
 * Idempotency keys only with IDEMPOTENCY=true (the keyed-create row): then honoured as the idempotency module does.
 */
// Only HTTP and METRICS are read from the environment (validated as `npm start` validates them).
const config = loadConfig({ HTTP: process.env.HTTP, METRICS: process.env.METRICS ?? 'false' })
const metrics = config.metrics ? new PrometheusMetrics() : noMetrics
const app = new App({
  validator: new AjvSchemaValidator(),
  extensions: metrics.enabled ? [metricsExtension(metrics)] : []
})
const keyed = process.env.IDEMPOTENCY === 'true'
const memory = new InMemoryStore(keyed ? { keyedWrites: new InMemoryKeyedWrites(clone) } : {})
const store = metrics.enabled ? new MeasuredStore(memory, metrics, 'memory', 'messages') : memory
app.use('messages', new AdapterService(store, { paginate: { default: 10, max: 50 }, multi: ['patch', 'remove'] }), {
  schemas: benchMessageSchemas
})
app.service('messages').hooks({ before: { all: [validateSchemas()] } })
if (keyed)
  app.hooks(
    idempotencyHooks({
      retentionMs: config.idempotencyRetentionMs,
      waitMs: 5000,
      digest: (text) => createHash('sha256').update(text).digest('base64url')
    })
  )
await addAuthentication(app)
await app.setup()
for (const record of seedRecords()) await app.service('messages').create(record)
const engines: Record<string, HttpEngineFactory> = { express: expressEngine, fastify: fastifyEngine }
const { server } = await engines[config.http](
  app,
  metrics.enabled ? { extensions: [httpMetrics({ port: metrics })] } : {}
).listen(0, '127.0.0.1')
socketIoTransport(app, server, {})
announce((server.address() as { port: number }).port)
// Exit normally on SIGTERM so `node --cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0))
