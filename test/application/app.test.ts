import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import type { HookContext } from '../../src/application/hook-context.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { Gateway } from '../../src/application/transport/gateway.js'

/*
 * The App as its parts compose it: registry (service-registry.test.ts), hook pipeline
 * (hook-pipeline.test.ts), events and channels (service-events.test.ts), transports (transport/).
 * Here: what only the App itself does.
 */
function messagesApp(options = {}) {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore(), { multi: true, ...options }))
  return app
}

describe('App', () => {
  it('runs app hooks around service hooks on calls through app.service', async () => {
    const app = messagesApp()
    const order: string[] = []
    app.hooks({
      before: {
        all: [
          () => {
            order.push('app before')
          }
        ]
      },
      after: {
        all: [
          () => {
            order.push('app after')
          }
        ]
      }
    })
    app.service('messages').hooks({
      before: {
        create: [
          () => {
            order.push('service before')
          }
        ]
      },
      after: {
        create: [
          () => {
            order.push('service after')
          }
        ]
      }
    })
    await app.service('messages').create({ text: 'hi' })
    expect(order).toEqual(['app before', 'service before', 'service after', 'app after'])
  })

  it('emits one event per record after a multi operation', async () => {
    const app = messagesApp()
    const created: unknown[] = []
    const patched: unknown[] = []
    app.service('messages').on('created', (data) => created.push(data))
    app.service('messages').on('patched', (data) => patched.push(data))
    await app.service('messages').create([{ n: 1 }, { n: 2 }])
    await app.service('messages').patch(null, { seen: true })
    expect(created).toEqual([
      { n: 1, id: 0 },
      { n: 2, id: 1 }
    ])
    expect(patched).toHaveLength(2)
  })

  it('emits no event for a failed call', async () => {
    const app = messagesApp()
    const removed: unknown[] = []
    app.service('messages').on('removed', (data) => removed.push(data))
    await expect(app.service('messages').remove(99)).rejects.toMatchObject({ name: 'NotFound' })
    expect(removed).toEqual([])
  })

  it('refuses an unknown path, naming it normalised', () => {
    expect(() => messagesApp().service('/nothing/here/')).toThrow("No service is registered at 'nothing/here'")
  })

  it('sets services up with (app, path) on setup, and a service registered later at once; tears them down', async () => {
    const app = new App()
    const calls: string[] = []
    const service = (name: string) => ({
      async find() {
        return []
      },
      setup(given: unknown, path: string) {
        calls.push(`setup ${name} ${path} ${String(given === app)}`)
      },
      teardown(given: unknown, path: string) {
        calls.push(`teardown ${name} ${path} ${String(given === app)}`)
      }
    })
    app.use('/first/', service('first'))
    expect(calls).toEqual([])
    await app.setup()
    app.use('second', service('second'))
    await new Promise((resolve) => setImmediate(resolve))
    await app.teardown()
    expect(calls).toEqual([
      'setup first first true',
      'setup second second true',
      'teardown first first true',
      'teardown second second true'
    ])
  })

  it('follows live stores from setup to teardown', async () => {
    const app = new App()
    let watching = 0
    app.use('live', {
      async find() {
        return []
      },
      watch: () => {
        watching++
        return () => {
          watching--
        }
      }
    })
    expect(watching).toBe(0)
    await app.setup()
    expect(watching).toBe(1)
    await app.teardown()
    expect(watching).toBe(0)
  })

  it('describes every service: methods, events, schemas and the hooks of a method in running order', () => {
    const app = messagesApp()
    const appHook = () => undefined
    const serviceHook = (_context: HookContext) => undefined
    app.hooks({ before: { all: [appHook] } })
    app.service('messages').hooks({ before: { find: [serviceHook] } })
    const [messages] = app.describe()
    expect(messages).toMatchObject({
      path: 'messages',
      methods: ['find', 'get', 'create', 'update', 'patch', 'remove'],
      events: ['created', 'updated', 'patched', 'removed']
    })
    expect(messages!.schemas).toBeUndefined()
    expect(messages!.hooks('find').before).toEqual([appHook, serviceHook])
    expect(messages!.hooks('get').before).toEqual([appHook])
  })

  it('idle() waits for the calls transports have in flight (a graceful shutdown, before the store closes)', async () => {
    const app = new App()
    let finish!: () => void
    const slow = new Promise<void>((resolve) => {
      finish = resolve
    })
    const order: string[] = []
    app.use('slow', {
      async find() {
        await slow
        order.push('call done')
        return []
      }
    })
    await app.idle()
    const gateway = new Gateway(app)
    const call = gateway.call({ path: 'slow', method: 'find', params: { provider: 'test' } })
    const idle = app.idle().then(() => order.push('idle'))
    // Not idle while the call runs: the first turns of the loop see only the call's own progress.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(order).toEqual([])
    finish()
    await idle
    await call
    expect(order).toEqual(['call done', 'idle'])
    gateway.shutdown()
  })

  it('idle() does not wait for internal calls (no provider): only what came in through a transport', async () => {
    const app = new App()
    let finish!: () => void
    const slow = new Promise<void>((resolve) => {
      finish = resolve
    })
    app.use('slow', { find: () => slow.then(() => []) })
    const call = app.service('slow').find()
    const order: string[] = []
    const idle = app.idle(60_000).then(() => order.push('idle'))
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(order).toEqual(['idle'])
    finish()
    await Promise.all([call, idle])
  })

  it('a transport call whose event listener throws fails, and is no longer counted in flight', async () => {
    const app = new App()
    app.use('things', { create: async (data: unknown) => data })
    app.service('things').on('created', () => {
      throw new Error('listener broke')
    })
    const gateway = new Gateway(app)
    await expect(
      gateway.call({ path: 'things', method: 'create', data: { a: 1 }, params: { provider: 'test' } })
    ).rejects.toThrow('listener broke')
    // Counted out: idle() resolves at once, not after its timeout.
    const order: string[] = []
    const idle = app.idle(60_000).then(() => order.push('idle'))
    await new Promise((resolve) => setImmediate(resolve))
    expect(order).toEqual(['idle'])
    await idle
    gateway.shutdown()
  })

  it('idle() gives up after its timeout when a call never ends', async () => {
    const app = new App()
    app.use('stuck', { find: () => new Promise(() => undefined) })
    const gateway = new Gateway(app)
    void gateway.call({ path: 'stuck', method: 'find', params: { provider: 'test' } })
    await expect(app.idle(20)).resolves.toBeUndefined()
    gateway.shutdown()
  })
})
