import { Server } from 'socket.io'
import { Gateway } from '../../application/transport/index.js'
import { silentLogger } from '../../domain/logger.js'
import type { RealtimeTransportFactory } from '../realtime/realtime-transport.js'
import { deliverEvents } from './delivery.js'
import { aroundCalls, aroundHandshakes } from './call-extensions.js'
import { serveClientScript } from './client-script.js'
import { SocketCalls } from './dispatch.js'
import { Handshake } from './handshake.js'
import { PendingOutput } from './pending-output.js'
import { SocketConnections } from './socket-connections.js'
import { releaseUpgradeResponses } from './upgrade-response.js'

/** What one socket may hold unsent before it is disconnected (SOCKET_MAX_BUFFERED_BYTES). */
export const DEFAULT_MAX_BUFFERED_BYTES = 4 * 1024 * 1024

/**
 * The socket.io transport on an HTTP engine's server (the port REST listens on): Feathers socket
 * calls, the login of connections and delivery of published events, in three parts — the handshake
 * (handshake.ts: a socket becomes a connection, logged in, recovered), dispatch (dispatch.ts: its
 * events become gateway calls) and delivery (delivery.ts: published events become socket events).
 * Closing the HTTP server detaches it from the app.
 */
export const socketIoTransport: RealtimeTransportFactory = (app, httpServer, options) => {
  const logger = options.logger ?? silentLogger
  const gateway = new Gateway(app, options.clock ? { clock: options.clock } : {})
  const extensions = options.extensions ?? []
  const windowMs = gateway.recovers ? (options.recoveryWindowMs ?? 0) : 0
  const connections = new SocketConnections()
  const handshake = new Handshake(gateway, connections, logger, windowMs, aroundHandshakes(extensions))
  const origins = options.corsOrigins ?? []
  const io = new Server(httpServer, {
    // The client script is served by serveClientScript below, compressed once rather than on every request.
    serveClient: false,
    // engine.io's default, said here so it stays: per-message deflate keeps zlib state (~200 KB) per connection.
    perMessageDeflate: false,
    // As the HTTP engines answer CORS: `*` allows any origin.
    ...(origins.length > 0 ? { cors: { origin: origins.includes('*') ? true : origins, credentials: true } } : {}),
    maxHttpBufferSize: options.maxMessageSize ?? 1e6,
    ...handshake.serverOptions()
  })
  releaseUpgradeResponses(io, httpServer)
  serveClientScript(io, logger)
  io.use(handshake.authenticate)
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES
  const pending = new PendingOutput(maxBufferedBytes, (socket, pendingBytes) => {
    gateway.droppedSlow('socketio')
    logger.warn('disconnected a socket that stopped reading', { socket: socket.id, pendingBytes, maxBufferedBytes })
  })
  const calls = new SocketCalls(
    {
      gateway,
      logger,
      maxConcurrentCalls: options.maxConcurrentCalls ?? 100,
      around: aroundCalls(gateway, extensions),
      socketEvents: Object.assign({}, ...extensions.map((extension) => extension.socketEvents ?? {})),
      admits: (socket) => pending.admits(socket)
    },
    (socket) => connections.connectionOf(socket)
  )
  io.on('connection', (socket) => {
    const { restored } = handshake.open(socket)
    calls.serve(socket, restored)
  })
  const stopDelivery = deliverEvents(io, gateway, connections, { logger, windowMs, pending })
  httpServer.once('close', () => {
    stopDelivery()
    gateway.shutdown()
  })
  return {
    // `disconnectSockets(true)` would tell clients the server disconnected them, and they would not come back.
    dropConnections: () => {
      for (const socket of io.of('/').sockets.values()) socket.conn.close()
    },
    disconnectAll: () => io.disconnectSockets(true)
  }
}
