import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { feathers, type Application } from '@feathersjs/feathers'
import { Forbidden, MethodNotAllowed, NotFound } from '@feathersjs/errors'
import restClientModule from '@feathersjs/rest-client'
import axios from 'axios'
import superagent from 'superagent'
import { ENGINES, startHttpServer, type TestServer } from './http-test-server.js'

// A CommonJS module: its exports object is the function and also carries it as `default`.
const restClient = restClientModule.default
type Transport = ReturnType<ReturnType<typeof restClient>['fetch']>
type Connect = (url: string) => Transport
const connections: [string, Connect][] = [
  ['fetch', (url) => restClient(url).fetch(fetch)],
  ['axios', (url) => restClient(url).axios(axios)],
  ['superagent', (url) => restClient(url).superagent(superagent)]
]

/** docs/wire-protocol.md: the official Feathers v5 REST client must work against every engine unchanged. */
const combinations = ENGINES.flatMap((engine) =>
  connections.map(([library, connect]) => [engine, library, connect] as const)
)

describe.each(combinations)('@feathersjs/rest-client against %s over %s', (engine, library, connect) => {
  let server: TestServer
  let app: Application
  let connection: Transport
  beforeAll(async () => {
    server = await startHttpServer(engine)
    connection = connect(server.url)
    app = feathers().configure(connection)
  })
  afterAll(() => server.close())

  it('runs find, get, create, update, patch and remove', async () => {
    const messages = app.service('messages')
    const created = await messages.create({ text: `official ${library}` })
    await expect(messages.get(created.id)).resolves.toEqual(created)
    const page = await messages.find({ query: { text: `official ${library}`, $limit: 5 } })
    expect(page).toMatchObject({ total: 1, limit: 5, skip: 0, data: [created] })
    const stamps = { createdAt: created.createdAt, updatedAt: expect.any(String) }
    await expect(messages.update(created.id, { text: 'u' })).resolves.toEqual({ text: 'u', id: created.id, ...stamps })
    await expect(messages.patch(created.id, { p: 1 })).resolves.toEqual({ text: 'u', p: 1, id: created.id, ...stamps })
    await expect(messages.remove(created.id)).resolves.toEqual({ text: 'u', p: 1, id: created.id, ...stamps })
  })

  it('sends bracket queries the server parses ($or, $in with 500 values, $sort)', async () => {
    const multi = app.service('multi')
    await multi.create([
      { lib: library, name: 'Ann' },
      { lib: library, name: 'Bob' },
      { lib: library, name: 'Eve' }
    ])
    const or = await multi.find({
      query: { lib: library, $or: [{ name: 'Ann' }, { name: 'Eve' }], $sort: { name: -1 } }
    })
    expect(or.map((r: { name: string }) => r.name)).toEqual(['Eve', 'Ann'])
    const names = Array.from({ length: 499 }, (_, i) => `x${i}`).concat('Bob')
    const inList = await multi.find({ query: { lib: library, name: { $in: names } } })
    expect(inList.map((r: { name: string }) => r.name)).toEqual(['Bob'])
    const removed = await multi.remove(null, { query: { lib: library } })
    expect(removed).toHaveLength(3)
  })

  it('gets errors back as Feathers error classes', async () => {
    await expect(app.service('messages').get(424242)).rejects.toBeInstanceOf(NotFound)
    await expect(app.service('plain').create([{ a: 1 }])).rejects.toBeInstanceOf(MethodNotAllowed)
    const { id } = await app.service('guarded').create({ a: 1 })
    const refused = await app
      .service('guarded')
      .remove(id)
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(Forbidden)
    expect(refused).toMatchObject({ message: 'Removing is not allowed from outside', data: { provider: 'rest' } })
  })

  it('calls custom methods and reaches routed services', async () => {
    app.use(
      'echo' as never,
      connection.service('echo' as never) as never,
      { methods: ['find', 'get', 'shout'] } as never
    )
    await expect(
      (app.service('echo') as unknown as { shout(d: unknown): Promise<unknown> }).shout({ text: 'x' })
    ).resolves.toEqual({ shouted: 'X', query: {} })
    await expect(app.service('users/:userId/posts').get(3, { route: { userId: '9' } })).resolves.toMatchObject({
      id: '3',
      route: { userId: '9' }
    })
    await expect(app.service('echo').get('a b/c')).resolves.toMatchObject({ id: 'a b/c' })
  })

  it('emits local events for its own calls', async () => {
    const events: unknown[] = []
    app.service('multi').on('created', (data: unknown) => events.push(data))
    await app.service('multi').create([{ e: 1 }, { e: 2 }])
    expect(events).toHaveLength(2)
  })
})
