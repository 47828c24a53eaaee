import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import type { HookContext } from '../../src/application/hook-context.js'
import { BadRequest, MethodNotAllowed } from '../../src/domain/errors/errors.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'

function messagesApp(options = {}) {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore(), { multi: true, ...options }))
  return app
}

describe('App hook pipeline', () => {
  it('runs around, before, method and after hooks in order, app hooks wrapping service hooks', async () => {
    const app = messagesApp()
    const order: string[] = []
    const log = (name: string) => async () => { order.push(name) }
    app.hooks({
      around: { all: [async (_ctx: HookContext, next: () => Promise<void>) => { order.push('app around in'); await next(); order.push('app around out') }] },
      before: { all: [log('app before')] },
      after: { all: [log('app after')] }
    })
    app.service('messages').hooks({
      around: { create: [async (_ctx: HookContext, next: () => Promise<void>) => { order.push('service around in'); await next(); order.push('service around out') }] },
      before: { create: [log('service before')] },
      after: { all: [log('service after')] }
    })
    await app.service('messages').create({ text: 'hi' })
    expect(order).toEqual([
      'app around in', 'service around in', 'app before', 'service before',
      'service after', 'app after', 'service around out', 'app around out'
    ])
  })

  it('skips the method when a before hook sets the result', async () => {
    const app = messagesApp()
    app.service('messages').hooks({ before: { get: [(ctx: HookContext) => { ctx.result = { id: 'cached' } }] } })
    await expect(app.service('messages').get(42)).resolves.toEqual({ id: 'cached' })
  })

  it('lets error hooks see and replace the error', async () => {
    const app = messagesApp()
    let seen: unknown
    app.service('messages').hooks({
      error: { get: [(ctx: HookContext) => { seen = ctx.error; ctx.error = new BadRequest('replaced') }] }
    })
    await expect(app.service('messages').get(1)).rejects.toThrow('replaced')
    expect((seen as Error).name).toBe('NotFound')
  })

  it('runs each hook exactly once per call', async () => {
    const app = messagesApp()
    let calls = 0
    app.service('messages').hooks({ before: { all: [() => { calls++ }] } })
    await app.service('messages').find()
    await app.service('messages').create({ a: 1 })
    expect(calls).toBe(2)
  })

  it('answers MethodNotAllowed to external callers of methods that are not exposed', async () => {
    const app = new App()
    app.use('readonly', new AdapterService(new InMemoryStore()), { methods: ['find', 'get'] })
    await expect(app.service('readonly').create({ a: 1 }, { provider: 'rest' })).rejects.toBeInstanceOf(MethodNotAllowed)
    await expect(app.service('readonly').create({ a: 1 })).resolves.toEqual({ a: 1, id: 0 })
  })

  it('emits one event per record after a multi operation', async () => {
    const app = messagesApp()
    const created: unknown[] = []
    const patched: unknown[] = []
    app.service('messages').on('created', (data) => created.push(data))
    app.service('messages').on('patched', (data) => patched.push(data))
    await app.service('messages').create([{ n: 1 }, { n: 2 }])
    await app.service('messages').patch(null, { seen: true })
    expect(created).toEqual([{ n: 1, id: 0 }, { n: 2, id: 1 }])
    expect(patched).toHaveLength(2)
  })

  it('rejects data that is not an object before any hook runs', async () => {
    const app = messagesApp()
    await expect(app.service('messages').create('text' as never)).rejects.toThrow("First parameter for 'create' must be an object")
    await expect(app.service('messages').patch(0, undefined as never)).rejects.toThrow('No data provided')
  })
})

describe('nesting limits (found by the fuzz suite: deep JSON overflowed the stack as a 500)', () => {
  const deep = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth))

  it('refuses data nested deeper than 64 levels with a 400 before any hook runs, and stores nothing', async () => {
    const app = messagesApp()
    let hooked = false
    app.service('messages').hooks({ before: { all: [() => { hooked = true }] } })
    await expect(app.service('messages').create({ text: deep(20_000) })).rejects.toMatchObject({ code: 400, message: 'Data may be nested at most 64 levels deep' })
    await expect(app.service('messages').patch(null, { text: deep(100) })).rejects.toMatchObject({ code: 400 })
    expect(hooked).toBe(false)
    expect(await app.service('messages').find()).toEqual([])
    await expect(app.service('messages').create({ text: deep(60) })).resolves.toMatchObject({ id: 0 })
  })

  it('refuses a query nested deeper than 64 levels with a 400', async () => {
    const app = messagesApp()
    await expect(app.service('messages').find({ query: { text: deep(20_000) } })).rejects.toMatchObject({ code: 400, message: 'The query may be nested at most 64 levels deep' })
  })
})
