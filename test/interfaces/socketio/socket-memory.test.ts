import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Server, type Socket as ServerSocket } from 'socket.io'
import { WebSocket } from 'ws'
import { silentLogger } from '../../../src/domain/logger.js'
import { SocketCalls } from '../../../src/interfaces/socketio/dispatch.js'
import { Handshake } from '../../../src/interfaces/socketio/handshake.js'
import { SocketConnections } from '../../../src/interfaces/socketio/socket-connections.js'
import { releaseUpgradeResponses } from '../../../src/interfaces/socketio/upgrade-response.js'
import { connect, emitAck, startSocketServer, type TestServer } from './support.js'
import { createSocketTestApp } from './test-app.js'
import { Gateway } from '../../../src/application/transport/gateway.js'

/** A full garbage collection, from inside the test (jest's process runs without --expose-gc). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}

/** What a socket keeps on the server: no per-message deflate state, and not its upgrade request. */
describe('what an idle socket keeps', () => {
  const { app } = createSocketTestApp()
  let server: TestServer

  beforeAll(async () => {
    await app.service('users').create({ email: 'a@x.io', password: 'secret-pw' })
    server = await startSocketServer(app)
  })
  afterAll(() => server.close())

  it('refuses per-message deflate that a client offers', async () => {
    const url = `${server.url.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`
    const client = new WebSocket(url, { perMessageDeflate: true })
    const upgraded = new Promise<IncomingMessage>((resolve, reject) => {
      client.once('upgrade', resolve)
      client.once('error', reject)
    })
    const opened = new Promise((resolve) => client.once('open', resolve))
    const response = await upgraded
    await opened
    expect(response.headers['sec-websocket-extensions']).toBeUndefined()
    expect(client.extensions).toBe('')
    const closed = new Promise((resolve) => client.once('close', resolve))
    client.close()
    await closed
  })

  it("keeps the close listeners an app put on a socket's TCP connection before its upgrade", async () => {
    const http = createServer()
    const io = new Server(http, { serveClient: false })
    releaseUpgradeResponses(io, http)
    const tcp: Duplex[] = []
    let closes = 0
    const tracker = () => closes++
    http.on('connection', (socket: Duplex) => {
      tcp.push(socket)
      socket.on('close', tracker)
    })
    const opened = new Promise((resolve) => io.once('connection', resolve))
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const client = await connect(`http://127.0.0.1:${(http.address() as AddressInfo).port}`)
    await opened
    try {
      expect(tcp).toHaveLength(1)
      expect(tcp[0]!.listeners('close')).toContain(tracker)
      const closed = new Promise((resolve) => tcp[0]!.once('close', resolve))
      client.disconnect()
      await closed
      expect(closes).toBe(1)
    } finally {
      client.disconnect()
      await io.close()
    }
  })

  it('lets go of the upgrade request once the socket opened, keeping the Authorization header it logged in with', async () => {
    const { accessToken } = (await app
      .service('authentication')
      .create({ strategy: 'local', email: 'a@x.io', password: 'secret-pw' })) as { accessToken: string }
    // The transport's handshake on a socket.io server of the test's own, so that its sockets can be looked at.
    const http = createServer()
    const io = new Server(http, { serveClient: false })
    const connections = new SocketConnections()
    const gateway = new Gateway(app)
    const handshake = new Handshake(gateway, connections, silentLogger, 0, (_headers, handshake) => handshake())
    const calls = new SocketCalls(
      { gateway, logger: silentLogger, maxConcurrentCalls: 10, around: (_event, _path, call) => call() },
      (socket) => connections.connectionOf(socket)
    )
    const opened: ServerSocket[] = []
    releaseUpgradeResponses(io, http)
    const requestAtHandshake: WeakRef<IncomingMessage>[] = []
    io.use((socket, next) => {
      requestAtHandshake.push(new WeakRef(socket.request))
      handshake.authenticate(socket, next)
    })
    io.on('connection', (socket) => {
      handshake.open(socket)
      calls.serve(socket)
      opened.push(socket)
    })
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const client = await connect(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, {
      extraHeaders: { authorization: `Bearer ${accessToken}` }
    })
    try {
      const [socket] = opened
      expect(requestAtHandshake).toHaveLength(1)
      expect(socket!.request).toBeNull()
      expect(socket!.conn.request).toBeNull()
      expect(connections.connectionOf(socket!)!.headers!.authorization).toBe(`Bearer ${accessToken}`)
      // Still logged in by its header: a service that needs a login answers.
      const [error, users] = await emitAck(client, 'find', 'users', {})
      expect(error).toBeNull()
      expect(users).toMatchObject({ total: 1 })
      // Nothing holds the request any more (engine.io's upgrade response did, through the TCP socket's `close`).
      collectGarbage()
      expect(requestAtHandshake[0]!.deref()).toBeUndefined()
    } finally {
      client.disconnect()
      await io.close()
      gateway.shutdown()
    }
  })

  it("lets go of the TCP chunk a socket's last message arrived in (ws keeps that frame's mask as a view into it)", async () => {
    const http = createServer()
    const io = new Server(http, { serveClient: false, maxHttpBufferSize: 1e6 })
    const connections = new SocketConnections()
    const gateway = new Gateway(app)
    const calls = new SocketCalls(
      { gateway, logger: silentLogger, maxConcurrentCalls: 10, around: (_event, _path, call) => call() },
      (socket) => connections.connectionOf(socket)
    )
    const opened: ServerSocket[] = []
    io.on('connection', (socket) => {
      connections.add(socket)
      calls.serve(socket)
      opened.push(socket)
    })
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const client = await connect(`http://127.0.0.1:${(http.address() as AddressInfo).port}`)
    try {
      // Far larger than one read of the TCP socket (64 KB): the frame's mask sits in a chunk of that size.
      const [error] = await emitAck(client, 'find', 'nothing-here', { text: 'x'.repeat(200_000) })
      expect(error).toMatchObject({ name: 'NotFound' })
      const transport = opened[0]!.conn.transport as unknown as { socket: { _receiver: { _mask: Buffer } } }
      const mask = transport.socket._receiver._mask
      expect(mask).toHaveLength(4)
      expect(mask.buffer.byteLength).toBeLessThanOrEqual(Buffer.poolSize)
    } finally {
      client.disconnect()
      await io.close()
      gateway.shutdown()
    }
  })
})
