import { describe, expect, it } from '@jest/globals'
import { App } from '../../src/application/app.js'
import type { Delivery } from '../../src/application/channel.js'
import { EVENT_RESOLVER, type EventResolverMark } from '../../src/application/event-stages.js'
import type { HookContext } from '../../src/application/hook-context.js'
import { Gateway } from '../../src/application/transport/gateway.js'
import type { Connection } from '../../src/domain/service/service.js'

/*
 * The kernel's stages between a live store's change and its transports (event-stages.ts): resolvers carried by
 * hooks run on store events that never pass through hooks, delivery stages of extensions split deliveries, and
 * events leave in the order they were published however long each one's stages take.
 */

type Change = { event: string; record: unknown }

/** A live service: its events come from `write`, as a store's change stream would send them. */
function liveService() {
  const listeners: ((change: Change) => void)[] = []
  return {
    async find() {
      return []
    },
    watch(listener: (change: Change) => void) {
      listeners.push(listener)
      return () => listeners.splice(listeners.indexOf(listener), 1)
    },
    write(event: string, record: unknown) {
      for (const listener of listeners) listener({ event, record })
    }
  }
}

/** A hook (doing nothing in calls) that carries an event resolver of `stage`. */
function marked(stage: EventResolverMark['stage'], resolve: EventResolverMark['resolve']) {
  const hook = (_context: HookContext, next: () => Promise<void>) => next()
  return Object.assign(hook, { [EVENT_RESOLVER]: { stage, resolve } })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** An app with one live service at `things`, two open connections in one channel, and every delivery kept. */
async function setup() {
  const app = new App()
  const things = liveService()
  app.use('things', things)
  const gateway = new Gateway(app)
  const deliveries: Delivery[] = []
  gateway.onDelivery((delivery) => deliveries.push(delivery))
  const ann: Connection = { provider: 'socketio', user: { id: 1, name: 'ann' } }
  const bob: Connection = { provider: 'socketio', user: { id: 2, name: 'bob' } }
  app.on('connection', (connection: Connection) => app.channel('everyone').join(connection))
  app.publish(() => app.channel('everyone'))
  await app.setup()
  gateway.open(ann)
  gateway.open(bob)
  const settled = async (count: number) => {
    for (let waited = 0; deliveries.length < count && waited < 2000; waited += 5) await sleep(5)
  }
  return { app, things, deliveries, ann, bob, settled }
}

describe('event resolvers carried by hooks', () => {
  it("resolve a live store's events once each, before local listeners and transports see them", async () => {
    const { app, things, deliveries, settled } = await setup()
    let runs = 0
    app.service('things').hooks({
      around: {
        all: [
          marked('result', async (data, context) => {
            runs++
            expect([context.method, context.type, context.params]).toEqual(['create', 'after', {}])
            return { ...(data as object), resolved: true }
          })
        ]
      }
    })
    const heard: unknown[] = []
    app.service('things').on('created', (data) => heard.push(data))
    things.write('created', { id: 1 })
    await settled(1)
    expect(heard).toEqual([{ id: 1, resolved: true }])
    expect(deliveries.map(({ data, connections }) => [data, connections.length])).toEqual([
      [{ id: 1, resolved: true }, 2]
    ])
    expect(runs).toBe(1)
  })

  it('publish events in order even when an earlier one takes longer to resolve', async () => {
    const { app, things, deliveries, settled } = await setup()
    app.service('things').hooks({
      around: {
        all: [
          marked('result', async (data) => {
            await sleep((data as { id: number }).id === 1 ? 40 : 1)
            return data
          })
        ]
      }
    })
    for (const id of [1, 2, 3]) things.write('created', { id })
    await settled(3)
    expect(deliveries.map(({ data }) => (data as { id: number }).id)).toEqual([1, 2, 3])
  })

  it('run external resolvers once per delivery, as its first recipient would have the event', async () => {
    const { app, things, deliveries, ann, bob, settled } = await setup()
    // A delivery stage that gives every recipient a delivery of its own (as rules do per ability).
    app.extend({
      deliver: (delivery) => delivery.connections.map((connection) => ({ ...delivery, connections: [connection] }))
    })
    app.service('things').hooks({
      around: {
        all: [
          marked('external', async (data, context) => ({
            ...(data as object),
            for: (context.params.user as { name: string }).name
          }))
        ]
      }
    })
    things.write('created', { id: 7 })
    await settled(2)
    expect(deliveries.map(({ data, connections }) => [data, connections])).toEqual([
      [{ id: 7, for: 'ann' }, [ann]],
      [{ id: 7, for: 'bob' }, [bob]]
    ])
  })

  it('never deliver an event whose resolver failed, tell the app, and go on with the next', async () => {
    const { app, things, deliveries, settled } = await setup()
    const errors: unknown[] = []
    app.on('error', (error: Error, event: unknown) => errors.push([error.message, event]))
    app.service('things').hooks({
      around: {
        all: [
          marked('result', async (data) => {
            if ((data as { id: number }).id === 1) throw new Error('lookup failed')
            return data
          })
        ]
      }
    })
    things.write('created', { id: 1 })
    things.write('created', { id: 2 })
    await settled(1)
    await sleep(20)
    expect(deliveries.map(({ data }) => data)).toEqual([{ id: 2 }])
    expect(errors).toEqual([['lookup failed', { path: 'things', event: 'created' }]])
  })
})

describe('delivery stages of extensions', () => {
  it('drop recipients and keep publication order when async', async () => {
    const { app, things, deliveries, ann, settled } = await setup()
    app.extend({
      deliver: async (delivery, event) => {
        expect(event).toMatchObject({ path: 'things', event: 'created' })
        await sleep((delivery.data as { id: number }).id === 1 ? 30 : 0)
        return [{ ...delivery, connections: delivery.connections.filter((c) => c === ann) }]
      }
    })
    things.write('created', { id: 1 })
    things.write('created', { id: 2 })
    await settled(2)
    expect(deliveries.map(({ data, connections }) => [data, connections])).toEqual([
      [{ id: 1 }, [ann]],
      [{ id: 2 }, [ann]]
    ])
  })

  it('leave publication synchronous when there is none', async () => {
    const { things, deliveries } = await setup()
    things.write('created', { id: 1 })
    expect(deliveries).toHaveLength(1)
  })
})
