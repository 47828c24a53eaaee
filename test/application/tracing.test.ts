import { describe, expect, it } from '@jest/globals'
import { App } from '../../src/application/app.js'
import { tracingExtension } from '../../src/infrastructure/tracing/index.js'
import type { Delivery } from '../../src/application/channel.js'
import { GeneralError, NotFound } from '../../src/domain/errors/errors.js'
import type { Params } from '../../src/domain/service/service.js'
import { RecordingTracer } from '../support/recording-tracer.js'
import { Gateway } from '../../src/application/transport/gateway.js'

/*
 * What the application traces (README "Traces"): each service call is a span `<path>.<method>` around
 * its hooks — calls made by hooks are its children — and each event is published in a span of its own
 * trace, linked to the call (or, for a live store, the write) that caused it. The transports' server
 * spans and the stores' query spans are tested end to end (test/e2e/traces.test.ts).
 */
function tracedApp() {
  const tracer = new RecordingTracer()
  const app = new App({ extensions: [tracingExtension(tracer)] })
  app.use('users', {
    async get(id: number) {
      return { id }
    }
  })
  app.use('messages', {
    async create(data: object) {
      return { id: 1, ...data }
    },
    async get(id: number) {
      if (id === 0) throw new NotFound('no such message')
      throw new GeneralError('the store broke')
    }
  })
  app.service('messages').hooks({
    before: {
      create: [
        async (context) => {
          await context.app.service('users').get(7)
        }
      ]
    }
  })
  return { app, tracer }
}

describe('service call spans', () => {
  it('wraps each call with its hooks in `<path>.<method>`; a call made by a hook is its child', async () => {
    const { app, tracer } = tracedApp()
    await app.service('messages').create({ text: 'hi' }, { provider: 'rest' } as Params)
    const [create] = tracer.named('messages.create')
    expect(create!.attributes).toEqual({
      'plumage.service': 'messages',
      'plumage.method': 'create',
      'plumage.provider': 'rest'
    })
    expect(create!.options.kind ?? 'internal').toBe('internal')
    const [get] = tracer.named('users.get')
    expect(get!.parent).toBe(create)
    expect(get!.attributes['plumage.provider']).toBe('internal')
  })

  it("fails the span on server errors only: a NotFound is the caller's", async () => {
    const { app, tracer } = tracedApp()
    await expect(app.service('messages').get(0)).rejects.toThrow(NotFound)
    await expect(app.service('messages').get(1)).rejects.toThrow(GeneralError)
    const [notFound, broken] = tracer.named('messages.get')
    expect(notFound!.error).toBeInstanceOf(NotFound)
    expect(notFound!.failure).toBeUndefined()
    expect(broken!.failure).toBeInstanceOf(GeneralError)
  })
})

describe('publication spans', () => {
  it('publishes each event in a new trace, linked to the call that wrote it', async () => {
    const { app, tracer } = tracedApp()
    const deliveries: Delivery[] = []
    new Gateway(app).onDelivery((delivery) => deliveries.push(delivery))
    const published: unknown[] = []
    app.service('messages').on('created', (data) => published.push([data, tracer.traceparent()]))
    await app.service('messages').create({ text: 'hi' })
    const [create] = tracer.named('messages.create')
    const [publish] = tracer.named('messages created publish')
    expect(publish!.options).toMatchObject({ kind: 'producer', parent: null, links: [create!.traceparent] })
    expect(publish!.parent).toBeUndefined()
    // Listeners run inside the publication's span.
    expect(published).toEqual([[{ id: 1, text: 'hi' }, publish!.traceparent]])
  })

  it('links an event of a live store to the write the store reports', async () => {
    const tracer = new RecordingTracer()
    const app = new App({ extensions: [tracingExtension(tracer)] })
    let emit: (change: { event: string; record: unknown; trace?: string }) => void = () => undefined
    app.use('rooms', {
      async find() {
        return []
      },
      watch: (listener: typeof emit) => {
        emit = listener
        return () => undefined
      }
    })
    await app.setup()
    emit({ event: 'created', record: { id: 'r1' }, trace: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })
    emit({ event: 'removed', record: { id: 'r1' } })
    expect(tracer.named('rooms created publish')[0]!.options.links).toEqual([
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    ])
    expect(tracer.named('rooms removed publish')[0]!.options.links).toEqual([])
  })
})
