import { afterAll, describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import type { Paginated } from '../../src/domain/service/service.js'
import { PostgresDatabase, PostgresService, PostgresStoreFactory, service } from '../../src/library/postgres.js'
import { discoverPostgres } from '../support/postgres-server.js'

// Building the service needs no server (the pool is made on first use); the calls and events below run on a real
// PostgreSQL (POSTGRES_URL, or a throw-away server from the installed binaries), skipped with the loud line without.
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip
const factories: PostgresStoreFactory[] = []

afterAll(async () => {
  for (const factory of factories) await factory.close()
  await database?.stop()
})

function factoryOf(url: string, options: { watch?: boolean } = {}): PostgresStoreFactory {
  const factory = new PostgresStoreFactory(new PostgresDatabase({ url }), options)
  factories.push(factory)
  return factory
}

describe('PostgreSQL service(options)', () => {
  it('builds an adapter service with the Feathers options', () => {
    const messages = service({
      Model: factoryOf('postgres://nobody@127.0.0.1:1/none'),
      name: 'messages',
      id: '_id',
      paginate: { default: 10, max: 50 },
      events: ['typing']
    })
    expect(messages).toBeInstanceOf(AdapterService)
    expect(messages.id).toBe('_id')
    expect(messages.options.paginate).toEqual({ default: 10, max: 50 })
    expect(messages.events).toEqual(['typing'])
    expect(typeof messages.watch).toBe('function')
  })

  it('has no change stream when its factory does not watch, so the app emits method events', () => {
    const Model = factoryOf('postgres://nobody@127.0.0.1:1/none', { watch: false })
    expect(service({ Model, name: 'messages' }).watch).toBeUndefined()
  })
})

withServer('PostgreSQL service(options) on a real server', () => {
  it('init() makes the table; the service finds, paginates and writes, and its app publishes each write once', async () => {
    const Model = factoryOf(await database!.fresh())
    type Todo = { id?: string; title: string }
    const app = new App<{ todos: PostgresService<Todo> }>()
    const todosService = service<Todo>({ Model, name: 'todos', paginate: { default: 2 }, multi: ['create'] })
    app.use('todos', todosService)
    const todos = app.service('todos')
    await todosService.init()
    await app.setup()
    const events: string[] = []
    for (const event of ['created', 'patched', 'removed'])
      todos.on(event, (data) => events.push(`${event} ${(data as Todo).title}`))

    const first = await todos.create({ title: 'write the docs' })
    await todos.create([{ title: 'test' }, { title: 'ship' }])
    await todos.patch(first.id!, { title: 'write more docs' })
    await todos.remove(first.id!)
    const page = (await todos.find({ query: { $sort: { title: 1 } } })) as Paginated<Todo>
    expect(page.total).toBe(2)
    expect(page.data.map((todo) => todo.title)).toEqual(['ship', 'test'])
    await expect(todos.get(first.id!)).rejects.toMatchObject({ name: 'NotFound' })
    const expected = ['created write the docs', 'created test', 'created ship', 'patched write more docs']
    expected.push('removed write more docs')
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (events.length < expected.length) return
        clearInterval(check)
        resolve()
      }, 20)
    })
    expect(events).toEqual(expected)
    await app.teardown?.()
  }, 60_000)
})
