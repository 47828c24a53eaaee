import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { EventEmitter } from 'node:events'
import type { Socket } from 'socket.io-client'
import { NotFound, Timeout } from '../../../../src/domain/errors/errors.js'
import { createClient } from '../../../../src/interfaces/client/client-app.js'
import { socketio, SocketioTransport } from '../../../../src/interfaces/client/socket/socketio-transport.js'
import { connect, disconnectAll, emitAck, startSocketServer, type TestServer } from '../../socketio/support.js'
import { Gate, createSocketTestApp } from '../../socketio/test-app.js'

const { app, gate } = createSocketTestApp()
let server: TestServer
const sockets: Socket[] = []

async function client(options = {}) {
  const socket = await connect(server.url)
  sockets.push(socket)
  return { socket, client: createClient().configure(socketio(socket, options)) }
}

beforeAll(async () => {
  await app.service('users').create({ email: 'a@x.io', password: 'secret-pw' })
  server = await startSocketServer(app)
})
afterAll(async () => {
  await disconnectAll(app, sockets)
  await server.close()
})

describe('socketio client transport', () => {
  it('calls the six methods', async () => {
    const { client: c } = await client()
    const multi = c.service('multi')
    expect(await multi.create({ text: 'a' })).toEqual({ text: 'a', id: 0 })
    expect(await multi.create([{ text: 'b' }])).toEqual([{ text: 'b', id: 1 }])
    expect(await multi.get(0)).toEqual({ text: 'a', id: 0 })
    expect(await multi.find({ query: { text: 'b' } })).toEqual([{ text: 'b', id: 1 }])
    expect(await multi.update(0, { text: 'A' })).toEqual({ text: 'A', id: 0 })
    expect(await multi.patch(null, { seen: true })).toHaveLength(2)
    expect(await multi.remove(1)).toEqual({ text: 'b', seen: true, id: 1 })
    expect(await c.service('users/:userId/posts').find({ route: { userId: '7' } })).toEqual({ userId: '7' })
    expect(await c.service('echo').find()).toMatchObject({ query: {}, provider: 'socketio' })
  })

  it('rejects with the server error rebuilt by name', async () => {
    const { client: c } = await client()
    const error = await c
      .service('multi')
      .get(999)
      .catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(NotFound)
    expect(error).toMatchObject({ message: "No record found for id '999'", code: 404 })
  })

  it('receives standard and custom events for services it listens to', async () => {
    const [{ client: watcher, socket }, { client: caller }] = [await client(), await client()]
    await emitAck(socket, 'authenticate', { strategy: 'local', email: 'a@x.io', password: 'secret-pw' })
    const created = new Promise((resolve) => watcher.service('multi').once('created', resolve))
    const boom = new Promise((resolve) => watcher.service('custom').once('boom', resolve))
    await caller.service('multi').create({ text: 'evt' })
    await caller.service('custom').methods('shout').shout({ text: 'hey' })
    expect(await created).toEqual({ text: 'evt', id: expect.any(Number) })
    expect(await boom).toEqual({ loud: 'hey' })
  })

  it('rejects a call without an answer with a Timeout error after the configured time', async () => {
    gate.current = new Gate()
    const { client: c } = await client({ timeout: 50 })
    const error = await c
      .service('slow')
      .find()
      .catch((thrown: unknown) => thrown)
    gate.current.open()
    expect(error).toBeInstanceOf(Timeout)
    expect((error as Error).message).toBe('Timeout of 50ms exceeded calling find on slow')
  })
})

describe('socketio client transport: reconnections', () => {
  /** What the transport reads of a socket.io-client socket, moved by hand. */
  class FakeSocket extends EventEmitter {
    connected = false
    recovered = false
    reconnect(recovered: boolean): void {
      this.recovered = recovered
      this.connected = true
      this.emit('connect')
    }
  }

  function configured(socket: FakeSocket) {
    const app = createClient().configure(socketio(socket))
    const seen: string[] = []
    app.on('connect', () => seen.push('connect'))
    app.on('events-lost', () => seen.push('events-lost'))
    return seen
  }

  it('says events-lost when a reconnection was not resumed, not on the first connection nor a resumed one', () => {
    const socket = new FakeSocket()
    const seen = configured(socket)
    socket.reconnect(false)
    socket.reconnect(true)
    socket.reconnect(false)
    expect(seen).toEqual(['connect', 'connect', 'connect', 'events-lost'])
  })

  it('counts a socket that was already connected when configured as connected before', () => {
    const socket = new FakeSocket()
    socket.connected = true
    const seen = configured(socket)
    socket.reconnect(false)
    expect(seen).toEqual(['connect', 'events-lost'])
  })
})

describe('socketio client transport: an answer after the timeout', () => {
  /** A socket whose acks the test calls by hand. */
  const socketWithAcks = () => {
    const acks: ((error: unknown, result: unknown) => void)[] = []
    const socket = {
      emit: (_event: string, ...args: unknown[]) => void acks.push(args.at(-1) as (typeof acks)[number]),
      on: () => undefined,
      off: () => undefined
    }
    return { socket, acks }
  }

  it('gives a late answer to `late` (a watch to unwatch), an answer in time to the promise only', async () => {
    const { socket, acks } = socketWithAcks()
    const transport = new SocketioTransport(socket, { timeout: 30 })
    const late: unknown[] = []
    const timedOut = transport.requestWithLate((result) => late.push(result), 'watch', 'messages', {}, {})
    await expect(timedOut).rejects.toBeInstanceOf(Timeout)
    acks[0]!(null, { id: '7', records: [] })
    expect(late).toEqual([{ id: '7', records: [] }])
    const inTime = transport.requestWithLate((result) => late.push(result), 'watch', 'messages', {}, {})
    acks[1]!(null, { id: '8', records: [] })
    expect(await inTime).toEqual({ id: '8', records: [] })
    // An error that comes late is nobody's: neither the promise (settled) nor `late` sees it.
    const failed = transport.requestWithLate((result) => late.push(result), 'watch', 'messages', {}, {})
    await expect(failed).rejects.toBeInstanceOf(Timeout)
    acks[2]!({ name: 'NotFound', code: 404, message: 'gone' }, undefined)
    expect(late).toHaveLength(1)
  })
})
