import { describe, expect, it } from '@jest/globals'
import { App } from '../../src/application/app.js'
import type { Delivery } from '../../src/application/channel.js'
import { Gateway } from '../../src/application/transport/gateway.js'
import type { CallInfo, Extension, PublishInfo } from '../../src/domain/service/extension.js'
import type { Connection } from '../../src/domain/service/service.js'

/** An app with one plain service and a record of what every extension saw, in order. */
function appWith(...extensions: ((seen: string[]) => Extension)[]) {
  const seen: string[] = []
  const app = new App()
  app.use('notes', {
    async create(data: { text: string }) {
      seen.push(`create ${data.text}`)
      return { id: 1, ...data }
    },
    async get(): Promise<never> {
      throw new Error('broken')
    }
  })
  for (const extension of extensions) app.extend(extension(seen))
  return { app, seen }
}

const around =
  (name: string) =>
  (seen: string[]): Extension => ({
    async aroundCall<T>(call: CallInfo, next: () => Promise<T>): Promise<T> {
      seen.push(`${name} before ${call.path}.${call.method} (${call.provider ?? 'internal'}, exposed ${call.exposed})`)
      try {
        return await next()
      } finally {
        seen.push(`${name} after`)
      }
    },
    aroundPublish(event: PublishInfo, next: () => void) {
      seen.push(`${name} publishes ${event.path} ${event.event} (${event.cause})`)
      next()
    }
  })

describe('extensions of the app', () => {
  it('wraps every call, the first added outermost, with the events emitted inside the call', async () => {
    const { app, seen } = appWith(around('outer'), around('inner'))
    app.service('notes').on('created', () => seen.push('listener'))
    await app.service('notes').create({ text: 'hi' }, { provider: 'rest' })
    expect(seen).toEqual([
      'outer before notes.create (rest, exposed true)',
      'inner before notes.create (rest, exposed true)',
      'create hi',
      'outer publishes notes created (call)',
      'inner publishes notes created (call)',
      'listener',
      'inner after',
      'outer after'
    ])
  })

  it('sees failed calls settle through it, and calls made on the server as internal', async () => {
    const { app, seen } = appWith(around('only'))
    await expect(app.service('notes').get(1)).rejects.toThrow('broken')
    expect(seen).toEqual(['only before notes.get (internal, exposed true)', 'only after'])
  })

  it('marks custom events as such', () => {
    const { app, seen } = appWith(around('only'))
    app.service('notes').emit('archived', { id: 1 })
    expect(seen).toEqual(['only publishes notes archived (custom)'])
  })

  it('tells observers of each declared event published, each delivery and each connection', async () => {
    const observed: unknown[] = []
    const { app } = appWith(() => ({
      published: (path, event) => observed.push(['published', path, event]),
      delivered: (path, event, count) => observed.push(['delivered', path, event, count]),
      connection: (change, transport) => observed.push([change, transport])
    }))
    const gateway = new Gateway(app)
    const deliveries: Delivery[] = []
    gateway.onDelivery((delivery) => deliveries.push(delivery))
    const connection: Connection = { provider: 'test', headers: {} }
    app.on('connection', (joined: Connection) => app.channel('all').join(joined))
    app.publish(() => app.channel('all'))
    gateway.open(connection)
    await app.service('notes').create({ text: 'hi' })
    gateway.droppedSlow('test')
    gateway.close(connection)
    expect(deliveries).toHaveLength(1)
    expect(observed).toEqual([
      ['opened', 'test'],
      ['published', 'notes', 'created'],
      ['delivered', 'notes', 'created', 1],
      ['dropped-slow', 'test'],
      ['closed', 'test']
    ])
  })

  it('takes one record of published events and one connection extension at most', () => {
    const app = new App()
    app.extend({ record: () => '1' })
    expect(() => app.extend({ record: () => '2' })).toThrow('Only one extension may record published events')
    const connections = () => {
      throw new Error('not made here')
    }
    app.extend({ connections })
    expect(() => app.extend({ connections })).toThrow('Only one connection extension is allowed')
  })

  it('leaves a gateway without a connection extension unable to recover, saying so', () => {
    const gateway = new Gateway(new App())
    expect(gateway.recovers).toBe(false)
    expect(() => gateway.recovery).toThrow('This app keeps no event history: connections cannot be recovered')
  })
})
