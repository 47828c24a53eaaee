import type { Server as HttpServer } from 'node:http'
import { Server, type ServerOptions, type Socket } from 'socket.io'
import type { App, Delivery } from '../../application/transport/index.js'
import type { Clock } from '../../domain/clock.js'
import { convertError } from '../../domain/errors/convert-error.js'
import { FeathersError, TooManyRequests } from '../../domain/errors/errors.js'
import { silentLogger, type Logger } from '../../domain/logger.js'
import type { Connection } from '../../domain/service/service.js'
import { dispatchCall } from './dispatch-call.js'
import { tracedCall, tracedHandshake } from './traced-call.js'
import { WriteBatch } from './write-batch.js'

export interface SocketIoOptions {
  /** Largest accepted message in bytes; a bigger one closes the connection (socket.io maxHttpBufferSize). */
  maxMessageSize?: number
  /** Calls one connection may have in flight; more are answered with 429 TooManyRequests. */
  maxConcurrentCalls?: number
  logger?: Logger
  /** Decides when a connection's token expires; the composition root passes the app's Clock. */
  clock?: Clock
  /** Passed to socket.io as is (e.g. `cors`). */
  server?: Partial<ServerOptions>
}

type Ack = (...args: unknown[]) => void

/**
 * The socket.io transport on an existing HTTP server (the one REST listens on): Feathers socket
 * calls, socket authentication and delivery of published events. Closing the HTTP server (or
 * `io.close()`, which closes it) detaches it from the app.
 */
export function attachSocketIo(app: App, httpServer: HttpServer, options: SocketIoOptions = {}): Server {
  const logger = options.logger ?? silentLogger
  const maxConcurrentCalls = options.maxConcurrentCalls ?? 100
  const io = new Server(httpServer, { serveClient: false, ...options.server, maxHttpBufferSize: options.maxMessageSize ?? 1e6 })
  const connections = new WeakMap<Socket, Connection>()
  const sockets = new WeakMap<Connection, Socket>()
  const gateway = app.gateway(options.clock ? { clock: options.clock } : {})
  const batch = new WriteBatch()

  io.use((socket, next) => {
    const connection: Connection = { provider: 'socketio', headers: socket.handshake.headers }
    // For login throttling (params.connection.address); not enumerable, so calls' params keep their shape.
    Object.defineProperty(connection, 'address', { value: socket.handshake.address, enumerable: false })
    connections.set(socket, connection)
    sockets.set(connection, socket)
    tracedHandshake(gateway, socket.handshake.headers, () => gateway.handshake(connection)).then(() => next(), (thrown: unknown) => {
      const error = convertError(thrown)
      if (!(thrown instanceof FeathersError)) logger.error('socket handshake authentication failed', { error: thrown })
      // socket.io sends `message` and `data` to the client as its `connect_error`.
      next(Object.assign(new Error(error.message), { data: error.data }))
    })
  })

  io.on('connection', (socket) => {
    const connection = connections.get(socket)!
    let inFlight = 0
    gateway.open(connection)
    socket.on('disconnect', () => gateway.close(connection))
    socket.onAny((event: unknown, ...args: unknown[]) => {
      const ack = typeof args[args.length - 1] === 'function' ? (args.pop() as Ack) : undefined
      if (inFlight >= maxConcurrentCalls) {
        const error = new TooManyRequests(`Too many concurrent calls on this connection (limit ${maxConcurrentCalls}); wait for answers before sending more`)
        return answer(ack, error.toJSON())
      }
      inFlight++
      const run = () => event === 'authenticate' ? gateway.authenticate(connection, args[0])
        : event === 'logout' ? gateway.logout(connection)
          : dispatchCall(gateway, connection, event, args[0], args.slice(1))
      // Unexpected errors are logged inside the call's span, so the line carries its trace id.
      const call = tracedCall(gateway, event, args[0], () => run().catch((thrown: unknown) => {
        if (!(thrown instanceof FeathersError)) logger.error('socket call failed', { event: String(event), error: thrown })
        throw thrown
      }))
      call.then(
        (result) => answer(ack, null, result === undefined ? null : result),
        (thrown: unknown) => answer(ack, convertError(thrown).toJSON())
      ).finally(() => inFlight--)
    })
  })

  // One encode per event: socket.io's broadcast serialises the packet (and its websocket frame) once
  // for all target sockets.
  gateway.onDelivery((delivery: Delivery) => {
    const ids: string[] = []
    const batching = batch.open()
    for (const connection of delivery.connections) {
      const socket = sockets.get(connection)
      if (socket === undefined) continue
      ids.push(socket.id)
      if (batching) batch.add(socket)
    }
    if (ids.length === 0) return
    try {
      io.to(ids).emit(`${delivery.path} ${delivery.event}`, delivery.data)
    } catch (error) {
      logger.error('could not send an event to sockets', { path: delivery.path, event: delivery.event, error })
    }
  })

  httpServer.once('close', () => gateway.shutdown())

  function answer(ack: Ack | undefined, ...args: unknown[]): void {
    if (!ack) return
    try {
      ack(...args)
    } catch (error) {
      // A result socket.io cannot encode (e.g. circular) must not take the process down.
      logger.error('could not send a socket answer', { error })
      ack(convertError(error).toJSON())
    }
  }

  return io
}
