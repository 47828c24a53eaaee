import { describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { protect } from '../../../src/application/authentication/hooks/protect.js'
import type { HookContext } from '../../../src/application/hook-context.js'
import {
  resolve,
  resolveData,
  resolveExternal,
  resolveQuery,
  resolveResult,
  virtual
} from '../../../src/application/resolvers/index.js'
import { BadRequest, Unavailable } from '../../../src/domain/errors/errors.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'

type Todo = {
  id?: number
  text: string
  done?: boolean
  secret?: string
  upper?: string
}

const context = { params: {} } as HookContext

describe('resolve and virtual', () => {
  it('keeps unresolved properties, replaces resolved ones, and removes those resolved to undefined', async () => {
    const resolver = resolve<Todo>({
      text: async (value) => value?.trim(),
      secret: async () => undefined,
      upper: virtual(async (todo) => todo.text.toUpperCase())
    })
    const resolved = await resolver.resolve({ id: 1, text: ' milk ', done: false, secret: 's' }, context)
    expect(resolved).toEqual({ id: 1, text: 'milk', done: false, upper: ' MILK ' })
    expect(resolver.virtualNames).toEqual(['upper'])
  })

  it('gives each resolver the value, the whole record, the context and its path', async () => {
    const seen: unknown[] = []
    const resolver = resolve<Todo>({
      done: async (value, todo, ctx, status) => {
        seen.push(value, todo.text, ctx, status.path)
        return true
      }
    })
    await resolver.resolve({ text: 'a', done: false }, context, { path: ['todos'] })
    expect(seen).toEqual([false, 'a', context, ['todos', 'done']])
  })

  it('answers a virtual property computed from the record, whatever was stored under its name', async () => {
    const resolver = resolve<Todo>({ upper: virtual(async (todo) => todo.text.toUpperCase()) })
    expect(await resolver.resolve({ text: 'x', upper: 'stored' }, context)).toEqual({ text: 'x', upper: 'X' })
  })

  it('resolves only the properties a status names', async () => {
    const resolver = resolve<Todo>({ upper: virtual(async (todo) => todo.text.toUpperCase()) })
    expect(await resolver.resolve({ id: 2, text: 'x', done: true }, context, { properties: ['upper', 'id'] })).toEqual({
      id: 2,
      upper: 'X'
    })
  })

  it('fails with one 400 naming every failed property', async () => {
    const resolver = resolve<Todo>({
      text: async () => {
        throw new BadRequest('no text')
      },
      done: async () => {
        throw new Error('no done')
      }
    })
    const failure = await resolver.resolve({ text: 'a', done: true }, context).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(BadRequest)
    expect((failure as InstanceType<typeof BadRequest>).message).toBe('Error resolving data')
    expect((failure as InstanceType<typeof BadRequest>).data).toMatchObject({
      text: { name: 'BadRequest', message: 'no text' },
      done: { message: 'no done' }
    })
  })

  it("passes a server-side failure on as it is: a store's 503 is not the caller's 400", async () => {
    const resolver = resolve<Todo>({
      text: async () => {
        throw new BadRequest('no text')
      },
      done: async () => {
        throw new Unavailable('the store is unavailable')
      }
    })
    const failure = await resolver.resolve({ text: 'a', done: true }, context).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Unavailable)
    expect(failure).toMatchObject({ code: 503, message: 'the store is unavailable' })
  })

  it('names the one failed property too, whether its resolver rejects or throws at once', async () => {
    const rejects = resolve<Todo>({ text: async () => Promise.reject(new Error('no text')) })
    const throws = resolve<Todo>({
      text: (() => {
        throw new Error('at once')
      }) as never
    })
    for (const [resolver, message] of [
      [rejects, 'no text'],
      [throws, 'at once']
    ] as const) {
      const failure = await resolver.resolve({ text: 'a', done: true }, context).catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(BadRequest)
      expect((failure as InstanceType<typeof BadRequest>).data).toEqual({ text: { message } })
    }
  })
})

/** A todos service on the memory store, its hooks set by each test. */
function todosApp() {
  const app = new App()
  app.use('todos', new AdapterService<Todo>(new InMemoryStore<Todo>(), { paginate: { default: 10 }, multi: true }))
  return { app, todos: app.service('todos') }
}

describe('resolver hooks', () => {
  const trimmed = resolve<Todo>({ text: async (value) => value?.trim() })
  const upper = resolve<Todo>({ upper: virtual(async (todo) => todo.text.toUpperCase()) })

  it('resolveData resolves one record or each of an array before create, as an around or a before hook', async () => {
    const { app, todos } = todosApp()
    todos.hooks({ around: { create: [resolveData(trimmed)] }, before: { patch: [resolveData(trimmed)] } })
    expect(await todos.create({ text: ' a ' })).toMatchObject({ text: 'a' })
    expect(await todos.create([{ text: ' b ' }, { text: 'c ' }])).toMatchObject([{ text: 'b' }, { text: 'c' }])
    expect(await todos.patch(0, { text: ' d ' })).toMatchObject({ id: 0, text: 'd' })
    expect(app.paths).toEqual(['todos'])
  })

  it('resolveQuery resolves params.query before the method', async () => {
    const { todos } = todosApp()
    const onlyDone = resolve<{ done?: boolean }>({ done: async () => true })
    todos.hooks({ around: { find: [resolveQuery(onlyDone)] } })
    await todos.create([
      { text: 'a', done: true },
      { text: 'b', done: false }
    ])
    expect(await todos.find({ paginate: false, query: { done: false } })).toMatchObject([{ text: 'a' }])
  })

  it('resolveResult resolves one record, arrays and find pages, and must be an around hook', async () => {
    const { todos } = todosApp()
    todos.hooks({ around: { all: [resolveResult(upper)] } })
    expect(await todos.create({ text: 'a' })).toEqual({ id: 0, text: 'a', upper: 'A' })
    expect(await todos.create([{ text: 'b' }])).toEqual([{ id: 1, text: 'b', upper: 'B' }])
    expect(await todos.get(0)).toEqual({ id: 0, text: 'a', upper: 'A' })
    const page = await todos.find({})
    expect(page).toMatchObject({ total: 2, data: [{ upper: 'A' }, { upper: 'B' }] })
    expect(await todos.find({ paginate: false })).toHaveLength(2)
    await expect(resolveResult(upper)({ params: {} } as HookContext)).rejects.toThrow('must be used as an around hook')
  })

  it('resolveResult answers a $select of a virtual property (the store never sees it), the id kept', async () => {
    const { todos } = todosApp()
    let storeQuery: unknown
    todos.hooks({
      around: { all: [resolveResult(upper)] },
      before: { find: [(context) => void (storeQuery = context.params.query)] }
    })
    await todos.create({ text: 'a', done: true })
    expect(await todos.find({ paginate: false, query: { $select: ['upper'] } })).toEqual([{ id: 0, upper: 'A' }])
    expect(storeQuery).toEqual({})
    expect(await todos.find({ paginate: false, query: { $select: ['text'] } })).toEqual([{ id: 0, text: 'a' }])
    expect(storeQuery).toEqual({ $select: ['text'] })
    expect(await todos.find({ paginate: false, query: { $resolve: ['upper'] } })).toEqual([{ upper: 'A' }])
  })

  it('resolveExternal sets what leaves the server; internal callers keep the record, events carry the dispatch', async () => {
    const { todos } = todosApp()
    const hideSecret = resolve<Todo>({ secret: async () => undefined })
    todos.hooks({ around: { all: [resolveExternal(hideSecret)] } })
    const events: unknown[] = []
    todos.on('created', (todo) => events.push(todo))
    expect(await todos.create({ text: 'a', secret: 's' })).toEqual({ id: 0, text: 'a', secret: 's' })
    expect(events).toEqual([{ id: 0, text: 'a' }])
    expect(await todos.get(0, { provider: 'rest' })).toEqual({ id: 0, text: 'a' })
    expect(await todos.find({ provider: 'rest' })).toMatchObject({ data: [{ id: 0, text: 'a' }] })
  })

  it('resolveExternal composes with protect, and resolveResult resolves what protect dispatches', async () => {
    const { todos } = todosApp()
    const upperSecret = resolve<Todo>({ upper: virtual(async (todo) => todo.secret?.toUpperCase() ?? 'none') })
    todos.hooks({
      around: { all: [resolveExternal(upperSecret), resolveResult(upper)] },
      after: { all: [protect('secret')] }
    })
    await todos.create({ text: 'a', secret: 's' })
    // protect dispatched the record without `secret`; resolveResult added `upper` to both; the external
    // resolver runs on the dispatch, where the protected field is already gone.
    expect(await todos.get(0, { provider: 'rest' })).toEqual({ id: 0, text: 'a', upper: 'none' })
    expect(await todos.get(0)).toEqual({ id: 0, text: 'a', secret: 's', upper: 'A' })
  })
})
