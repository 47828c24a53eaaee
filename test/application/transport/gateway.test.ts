import { afterEach, describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import type { Delivery } from '../../../src/application/channel.js'
import { Gateway } from '../../../src/application/transport/gateway.js'
import { MethodNotAllowed, NotAuthenticated, NotFound } from '../../../src/domain/errors/errors.js'
import type { Connection } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'

const gateways: Gateway[] = []
afterEach(() => {
  for (const gateway of gateways.splice(0)) gateway.shutdown()
})

/** An app with `messages` (find, get, create exposed) and `users/:userId/posts`; everyone is published everything. */
function messagesApp() {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()), { methods: ['find', 'get', 'create'] })
  app.use('users/:userId/posts', {
    async find(params: { route?: Record<string, string> }) {
      return { route: params.route }
    }
  })
  app.on('connection', (connection: Connection) => app.channel('everyone').join(connection))
  app.publish(() => app.channel('everyone'))
  return app
}

function open(app: App): Gateway {
  const gateway = new Gateway(app)
  gateways.push(gateway)
  return gateway
}

const connection = (name: string, headers: Record<string, unknown> = {}): Connection => ({
  provider: 'socketio',
  name,
  headers
})

describe('Gateway: calls', () => {
  it('resolves a path to its service, with the trailing id only when asked for', () => {
    const gateway = open(messagesApp())
    expect(gateway.resolve('/messages')).toEqual({
      path: 'messages',
      methods: ['find', 'get', 'create'],
      route: {},
      id: undefined
    })
    expect(gateway.resolve('/messages/7', { id: true })).toEqual({
      path: 'messages',
      methods: ['find', 'get', 'create'],
      route: {},
      id: '7'
    })
    expect(gateway.resolve('/messages/7')).toBeUndefined()
    expect(gateway.resolve('/users/3/posts')).toMatchObject({ path: 'users/:userId/posts', route: { userId: '3' } })
    expect(gateway.resolve('/nothing', { id: true })).toBeUndefined()
  })

  it('runs a call through the hooks and answers its result', async () => {
    const app = messagesApp()
    app.service('messages').hooks({
      before: {
        create: [
          (context) => {
            context.data = { ...(context.data as object), stamped: true }
          }
        ]
      }
    })
    const gateway = open(app)
    await expect(
      gateway.call({ path: 'messages', method: 'create', data: { text: 'hi' }, params: { provider: 'test' } })
    ).resolves.toEqual({ result: { text: 'hi', stamped: true, id: 0 }, status: undefined, location: undefined })
    await expect(
      gateway.call({ path: 'messages', method: 'get', id: 0, params: { provider: 'test' } })
    ).resolves.toMatchObject({ result: { text: 'hi', id: 0 } })
    await expect(
      gateway.call({
        path: 'users/:userId/posts',
        method: 'find',
        params: { provider: 'test', route: { userId: '3' } }
      })
    ).resolves.toMatchObject({ result: { route: { userId: '3' } } })
  })

  it('answers the dispatched copy, and the status and location hooks set', async () => {
    const app = messagesApp()
    app.service('messages').hooks({
      after: {
        create: [
          (context) => {
            context.dispatch = { id: 'public' }
            context.http.status = 202
            context.http.location = '/elsewhere'
          }
        ]
      }
    })
    await expect(
      open(app).call({ path: 'messages', method: 'create', data: { secret: 1 }, params: { provider: 'test' } })
    ).resolves.toEqual({ result: { id: 'public' }, status: 202, location: '/elsewhere' })
  })

  it('hands the same result to callThen, resolving with what it returns, and rejects as call does', async () => {
    const app = messagesApp()
    app.service('messages').hooks({ after: { create: [(context) => void (context.http.status = 202)] } })
    const gateway = open(app)
    const seen: unknown[] = []
    const answered = gateway.callThen(
      { path: 'messages', method: 'create', data: { text: 'hi' }, params: { provider: 'test' } },
      (result) => {
        seen.push(result)
        return 'written'
      }
    )
    await expect(answered).resolves.toBe('written')
    expect(seen).toEqual([{ result: { text: 'hi', id: 0 }, status: 202, location: undefined }])
    const unknown = gateway.callThen({ path: 'nothing', method: 'find', params: { provider: 'test' } }, () => 'no')
    await expect(unknown).rejects.toBeInstanceOf(NotFound)
    const refused = gateway.callThen(
      { path: 'messages', method: 'remove', id: 0, params: { provider: 'test' } },
      String
    )
    await expect(refused).rejects.toBeInstanceOf(MethodNotAllowed)
  })

  it('rejects with NotFound for a path no service is registered at, and MethodNotAllowed for a method not exposed', async () => {
    const gateway = open(messagesApp())
    const unknown = gateway.call({ path: 'nothing', method: 'find', params: { provider: 'test' } })
    await expect(unknown).rejects.toBeInstanceOf(NotFound)
    await expect(unknown).rejects.toThrow("Service 'nothing' not found")
    await expect(
      gateway.call({ path: 'messages', method: 'remove', id: 0, params: { provider: 'test' } })
    ).rejects.toBeInstanceOf(MethodNotAllowed)
  })

  it('gives the params of a call on a connection: query, route, the connection and its members', () => {
    const gateway = open(messagesApp())
    const member = { ...connection('a'), user: { id: 1 } }
    expect(gateway.connectionParams(member, { a: '1' }, { userId: '3' })).toEqual({
      query: { a: '1' },
      route: { userId: '3' },
      connection: member,
      provider: 'socketio',
      name: 'a',
      headers: {},
      user: { id: 1 }
    })
    expect(gateway.connectionParams(member)).toMatchObject({ query: {}, route: {} })
  })
})

describe('Gateway: connections', () => {
  function lifecycle(app: App) {
    const seen: string[] = []
    app.on('connection', (member: Connection) => seen.push(`connection ${String(member.name)}`))
    app.on('disconnect', (member: Connection) => seen.push(`disconnect ${String(member.name)}`))
    return seen
  }

  it('emits connection on open and disconnect on close, once', () => {
    const app = messagesApp()
    const seen = lifecycle(app)
    const gateway = open(app)
    const a = connection('a')
    gateway.open(a)
    gateway.close(a)
    gateway.close(a)
    expect(seen).toEqual(['connection a', 'disconnect a'])
  })

  it('emits no disconnect for a connection that never opened (closed during its handshake)', async () => {
    const app = messagesApp()
    const seen = lifecycle(app)
    const gateway = open(app)
    const b = connection('b')
    await gateway.handshake(b)
    gateway.close(b)
    expect(seen).toEqual([])
  })

  it('a closed connection leaves every channel', () => {
    const app = messagesApp()
    const gateway = open(app)
    const a = connection('a')
    gateway.open(a)
    app.channel('room').join(a)
    gateway.close(a)
    expect([app.channel('everyone').length, app.channel('room').length]).toEqual([0, 0])
  })

  it('logs a connection in at the handshake from its Authorization header; a refused token fails the handshake', async () => {
    const app = messagesApp()
    const logins: unknown[] = []
    app.use('authentication', {
      async create(data: { accessToken?: string }) {
        logins.push(data)
        if (data.accessToken !== 'good') throw new NotAuthenticated('jwt malformed')
        return { accessToken: 'good' }
      }
    })
    const gateway = open(app)
    const deliveries: Delivery[] = []
    gateway.onDelivery((delivery) => deliveries.push(delivery))
    const [good, bad, anonymous] = [
      connection('good', { authorization: 'Bearer good' }),
      connection('bad', { authorization: 'Bearer bad' }),
      connection('anonymous')
    ]
    await expect(gateway.handshake(good)).resolves.toBeUndefined()
    await expect(gateway.handshake(bad)).rejects.toMatchObject({ name: 'NotAuthenticated', message: 'jwt malformed' })
    await expect(gateway.handshake(anonymous)).resolves.toBeUndefined()
    expect(logins).toEqual([
      { strategy: 'jwt', accessToken: 'good' },
      { strategy: 'jwt', accessToken: 'bad' }
    ])
    // A failed handshake leaves the connection unknown to the gateway: nothing is delivered to it.
    app.channel('room').join(good, bad)
    app.publish('created', () => app.channel('room'))
    await app.service('messages').create({ text: 'x' })
    expect(deliveries.map((delivery) => delivery.connections.map((member) => member.name))).toEqual([['good']])
  })

  it('a handshake with a header but no authentication service succeeds without a login', async () => {
    const gateway = open(messagesApp())
    await expect(gateway.handshake(connection('a', { authorization: 'Bearer token' }))).resolves.toBeUndefined()
  })
})

describe('Gateway: deliveries', () => {
  it('hands a transport only its own connections, and nothing when none of them is chosen', async () => {
    const app = messagesApp()
    const [socket, other] = [open(app), open(app)]
    const received: Delivery[] = []
    socket.onDelivery((delivery) => received.push(delivery))
    const [mine, theirs] = [connection('mine'), connection('theirs')]
    socket.open(mine)
    other.open(theirs)
    await app.service('messages').create({ text: 'to everyone' })
    app.publish('created', () => app.channel('theirs').join(theirs))
    await app.service('messages').create({ text: 'to theirs only' })
    expect(received).toEqual([
      { path: 'messages', event: 'created', data: { text: 'to everyone', id: 0 }, connections: [mine] }
    ])
  })

  it('hands over a delivery of only its own connections whole; a transport without connections gets nothing', async () => {
    const app = messagesApp()
    const [gateway, idle] = [open(app), open(app)]
    const received: Delivery[] = []
    const idleReceived: Delivery[] = []
    gateway.onDelivery((delivery) => received.push(delivery))
    idle.onDelivery((delivery) => idleReceived.push(delivery))
    gateway.open(connection('a'))
    gateway.open(connection('b'))
    await app.service('messages').create({ text: 'x' })
    expect(received.map((delivery) => delivery.connections.map((member) => member.name))).toEqual([['a', 'b']])
    expect(idleReceived).toEqual([])
  })

  it('stops delivering after shutdown, and after a connection closed', async () => {
    const app = messagesApp()
    const gateway = open(app)
    const received: string[] = []
    gateway.onDelivery((delivery) => received.push(...delivery.connections.map((member) => String(member.name))))
    const [a, b] = [connection('a'), connection('b')]
    gateway.open(a)
    gateway.open(b)
    app.publish('created', () => app.channel('fixed').join(a, b))
    await app.service('messages').create({ n: 1 })
    gateway.close(b)
    await app.service('messages').create({ n: 2 })
    gateway.shutdown()
    await app.service('messages').create({ n: 3 })
    expect(received).toEqual(['a', 'b', 'a'])
  })
})
