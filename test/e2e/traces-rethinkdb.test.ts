import { afterAll, describe, expect, it } from '@jest/globals'
import {
  builtInstances,
  listen,
  signUp,
  until,
  type Instance,
  type Instances,
  type Listener
} from '../support/app-instances.js'
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js'
import { RETHINKDB_BIN, rethinkDbProcess, type RethinkDbProcess } from '../support/rethinkdb-process.js'

/*
 * Two instances of the built server on one RethinkDB, both exporting spans to a receiver in this
 * test: a message written through the first is published by the second in a span linked to the
 * first instance's write — the event log carries the writer's traceparent. Needs a RethinkDB 2.4
 * executable (RETHINKDB_BIN); without it the suite is skipped with one loud line.
 */
const withBinary = RETHINKDB_BIN ? describe : describe.skip
if (!RETHINKDB_BIN)
  process.stderr.write(
    '\nRethinkDB cross-instance traces suite SKIPPED: set RETHINKDB_BIN to a rethinkdb 2.4 executable\n\n'
  )

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER_SPAN = '00f067aa0ba902b7'

let database: RethinkDbProcess | undefined
let instances: Instances | undefined
let receiver: OtlpReceiver | undefined
const running: Instance[] = []
const listeners: Listener[] = []

afterAll(async () => {
  for (const listener of listeners) listener.socket.disconnect()
  await Promise.all(running.map((instance) => instance.stop()))
  await instances?.cleanup()
  await database?.destroy()
  await receiver?.close()
})

withBinary('traces across instances on RethinkDB', () => {
  it('an event published by another instance links to the span of the write that caused it', async () => {
    database = await rethinkDbProcess('traces')
    receiver = await startOtlpReceiver()
    instances = await builtInstances('traces-rethinkdb')
    const env = (name: string) => ({
      RETHINKDB_URL: `rethinkdb://127.0.0.1:${database!.driverPort}/traces`,
      OTEL_SERVICE_NAME: name,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver!.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '600000'
    })
    const writer = await instances.start(env('plumage-writer'))
    running.push(writer)
    const publisher = await instances.start(env('plumage-publisher'))
    running.push(publisher)
    const token = await signUp(writer.url, 'bob@example.com')
    const listener = await listen(publisher.url, token)
    listeners.push(listener)

    const response = await fetch(`${writer.url}/messages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`
      },
      body: JSON.stringify({ text: 'traced across instances' })
    })
    expect(response.status).toBe(201)
    const { id } = (await response.json()) as { id: string }
    await until('the other instance publishes the message', () => listener.counts.has(`created ${id}`))
    listener.socket.disconnect()
    // SIGTERM: each instance exports its spans before it exits.
    expect(await writer.stop()).toBe(0)
    expect(await publisher.stop()).toBe(0)

    const spans = receiver.spans
    const [write] = spans.filter(
      (span) =>
        span.resource['service.name'] === 'plumage-writer' &&
        span.name === 'create messages' &&
        span.traceId === CALLER_TRACE
    )
    expect(write).toMatchObject({
      attributes: {
        'db.system.name': 'rethinkdb',
        'db.system': 'rethinkdb',
        'db.operation.name': 'create',
        'db.collection.name': 'messages'
      }
    })
    const published = spans.filter(
      (span) => span.resource['service.name'] === 'plumage-publisher' && span.name === 'messages created publish'
    )
    const linked = published.filter((span) =>
      span.links.some((link) => link.traceId === CALLER_TRACE && link.spanId === write!.spanId)
    )
    expect(linked).toHaveLength(1)
    expect(linked[0]).toMatchObject({ parentSpanId: '' })
    expect(linked[0]!.traceId).not.toBe(CALLER_TRACE)
  }, 180_000)
})
