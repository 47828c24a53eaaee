import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import { connect, disconnectAll, emitAck, startSocketServer, type TestServer } from './support.js'
import { Gate, createSocketTestApp } from './test-app.js'
import { ENGINES } from '../http/http-test-server.js'

/** The socket.io transport on the server of every HTTP engine. */
describe.each(ENGINES)('socket calls on %s', (engine) => {
  const { app, gate } = createSocketTestApp()
  let server: TestServer
  const sockets: Socket[] = []

  async function open(options = {}): Promise<Socket> {
    const socket = await connect(server.url, options)
    sockets.push(socket)
    return socket
  }

  beforeAll(async () => {
    server = await startSocketServer(app, { maxConcurrentCalls: 3, maxMessageSize: 10_000 }, engine)
  })
  afterEach(() => disconnectAll(app, sockets))
  afterAll(() => server.close())

  describe('socket method calls', () => {
    it('runs the six methods with the Feathers argument layout', async () => {
      const socket = await open()
      expect(await emitAck(socket, 'create', 'multi', { text: 'a' }, {})).toEqual([null, { text: 'a', id: 0 }])
      expect(await emitAck(socket, 'create', 'multi', [{ text: 'b' }, { text: 'c' }])).toEqual([
        null,
        [
          { text: 'b', id: 1 },
          { text: 'c', id: 2 }
        ]
      ])
      expect(await emitAck(socket, 'get', 'multi', 1, {})).toEqual([null, { text: 'b', id: 1 }])
      expect(await emitAck(socket, 'find', 'multi', { text: { $in: ['a', 'c'] }, $sort: { id: -1 } })).toEqual([
        null,
        [
          { text: 'c', id: 2 },
          { text: 'a', id: 0 }
        ]
      ])
      expect(await emitAck(socket, 'update', 'multi', 0, { text: 'A', id: 99 }, {})).toEqual([
        null,
        { text: 'A', id: 0 }
      ])
      expect(await emitAck(socket, 'patch', 'multi', 1, { seen: true }, {})).toEqual([
        null,
        { text: 'b', seen: true, id: 1 }
      ])
      expect(await emitAck(socket, 'patch', 'multi', null, { all: 1 }, { text: { $ne: 'A' } })).toEqual([
        null,
        [
          { text: 'b', seen: true, id: 1, all: 1 },
          { text: 'c', id: 2, all: 1 }
        ]
      ])
      expect(await emitAck(socket, 'remove', 'multi', 2, {})).toEqual([null, { text: 'c', id: 2, all: 1 }])
      expect(await emitAck(socket, 'remove', 'multi', null, {})).toEqual([
        null,
        expect.arrayContaining([{ text: 'A', id: 0 }])
      ])
      expect(await emitAck(socket, 'find', 'multi')).toEqual([null, []])
    })

    it('gives the service socket params: query with JSON types, route, connection, provider, headers', async () => {
      const socket = await open({ extraHeaders: { 'x-test': 'yes' } })
      const [error, seen] = (await emitAck(socket, 'find', '/echo/', { n: 1, b: true, z: null })) as [
        null,
        Record<string, unknown>
      ]
      expect(error).toBeNull()
      expect(seen.keys).toEqual(['query', 'route', 'connection', 'provider', 'headers'])
      expect(seen).toMatchObject({
        query: { n: 1, b: true, z: null },
        route: {},
        provider: 'socketio',
        hasConnection: true
      })
      expect((seen.headers as Record<string, string>)['x-test']).toBe('yes')
      expect(await emitAck(socket, 'find', 'users/42/posts', {})).toEqual([null, { userId: '42' }])
      expect(await emitAck(socket, 'get', 'echo', 7)).toEqual([null, { id: 7, query: {} }])
    })

    it('answers null for an undefined result and falsy results as they are', async () => {
      const socket = await open()
      expect(await emitAck(socket, 'remove', 'echo', 1, {})).toEqual([null, null])
      expect(await emitAck(socket, 'patch', 'echo', 1, {}, {})).toEqual([null, 0])
    })

    it('calls custom methods with (data, query)', async () => {
      const socket = await open()
      expect(await emitAck(socket, 'shout', 'custom', { text: 'hi' }, {})).toEqual([null, { shouted: true }])
    })
  })

  describe('socket dispatch errors', () => {
    const cases: [string, unknown[], Record<string, unknown>][] = [
      ['unknown service', ['find', 'nope', {}], { name: 'NotFound', code: 404, message: "Service 'nope' not found" }],
      ['path that is not a string', ['find', 42, {}], { name: 'NotFound', message: 'Invalid service path' }],
      [
        'method of no service',
        ['hidden', 'multi', {}],
        { name: 'MethodNotAllowed', code: 405, message: "Method 'hidden' not allowed on service 'multi'" }
      ],
      [
        'method this service lacks',
        ['update', 'custom', 1, {}, {}],
        { name: 'MethodNotAllowed', message: "Method 'update' not allowed on service 'custom'" }
      ],
      [
        'too many arguments',
        ['get', 'multi', 1, {}, {}],
        { name: 'BadRequest', code: 400, message: "Too many arguments for 'get' method" }
      ],
      ['query that is a string', ['find', 'multi', 'notAnObject'], { name: 'BadRequest', code: 400 }],
      ['query that is an array', ['find', 'multi', [1]], { name: 'BadRequest', code: 400 }],
      [
        'data that is a string',
        ['create', 'multi', 'a string', {}],
        { name: 'BadRequest', message: "First parameter for 'create' must be an object" }
      ],
      [
        'patch data that is an array',
        ['patch', 'multi', 1, [1], {}],
        { name: 'BadRequest', message: 'No data provided' }
      ],
      ['update without data', ['update', 'multi', 1], { name: 'BadRequest', message: 'No data provided' }],
      ['an id that is an object', ['get', 'multi', { $gt: 1 }, {}], { name: 'BadRequest', code: 400 }],
      ['a missing record', ['get', 'multi', 999, {}], { name: 'NotFound', message: "No record found for id '999'" }],
      [
        'a non-framework error',
        ['find', 'broken', {}],
        { name: 'GeneralError', code: 500, message: 'Internal server error' }
      ]
    ]

    it.each(cases)('acks %s with the error JSON', async (_name, args, expected) => {
      const socket = await open()
      const answer = await emitAck(socket, ...(args as [string, ...unknown[]]))
      expect(answer).toHaveLength(1)
      expect(answer[0]).toMatchObject({ ...expected, className: expect.any(String), errors: {} })
      expect(JSON.stringify(answer[0])).not.toMatch(/stack|Secret/)
    })

    it('runs a call without an ack and answers nothing', async () => {
      const socket = await open()
      const created = new Promise((resolve) => app.service('multi').once('created', resolve))
      socket.emit('create', 'multi', { noAck: true }, {})
      expect(await created).toMatchObject({ noAck: true })
      socket.emit('find', 'nope', {})
      socket.emit('hidden', 'multi')
      expect(await emitAck(socket, 'find', 'multi', { noAck: true })).toEqual([
        null,
        [expect.objectContaining({ noAck: true })]
      ])
    })

    it('survives malformed frames and keeps serving', async () => {
      const socket = await open()
      const closed = new Promise((resolve) => socket.once('disconnect', resolve))
      // Not a socket.io packet at all: the parser rejects it and socket.io closes this connection only.
      ;(socket.io.engine as unknown as { write(data: string): void }).write('42garbage[')
      await closed
      const other = await open()
      ;(other as unknown as { emit(...args: unknown[]): void }).emit(
        7 as unknown as string,
        'multi',
        (error: unknown) => error
      )
      other.emit('authenticate', 'not an object', () => {})
      expect(await emitAck(other, 'find', 'echo', {})).toEqual([
        null,
        expect.objectContaining({ provider: 'socketio' })
      ])
    })
  })

  describe('socket limits', () => {
    it('answers calls beyond the per-connection limit with 429 and serves the rest', async () => {
      const socket = await open()
      gate.current = new Gate()
      const inFlight = [
        emitAck(socket, 'find', 'slow', {}),
        emitAck(socket, 'find', 'slow', {}),
        emitAck(socket, 'find', 'slow', {})
      ]
      const [error] = await emitAck(socket, 'find', 'slow', {})
      expect(error).toMatchObject({ name: 'TooManyRequests', code: 429, className: 'too-many-requests' })
      gate.current.open()
      expect(await Promise.all(inFlight)).toEqual([
        [null, []],
        [null, []],
        [null, []]
      ])
      expect(await emitAck(socket, 'find', 'slow', {})).toEqual([null, []])
    })

    it('closes a connection that sends a message above the size limit, and only that one', async () => {
      const socket = await open()
      const bystander = await open()
      const closed = new Promise((resolve) => socket.once('disconnect', resolve))
      socket.emit('create', 'multi', { text: 'x'.repeat(20_000) }, {}, () => {})
      await closed
      expect(await emitAck(bystander, 'find', 'multi', { text: 'nothing' })).toEqual([null, []])
    })
  })
})
