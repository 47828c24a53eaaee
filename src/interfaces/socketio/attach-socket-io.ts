import type { Server as HttpServer } from 'node:http'
import { Server, type ServerOptions, type Socket } from 'socket.io'
import type { App, Delivery, Restorable } from '../../application/transport/index.js'
import type { Clock } from '../../domain/clock.js'
import { convertError } from '../../domain/errors/convert-error.js'
import { FeathersError, TooManyRequests } from '../../domain/errors/errors.js'
import { silentLogger, type Logger } from '../../domain/logger.js'
import { offsetRefreshMs } from '../../domain/realtime/recovery-settings.js'
import type { Connection } from '../../domain/service/service.js'
import { dispatchCall } from './dispatch-call.js'
import { tracedCall, tracedHandshake } from './traced-call.js'
import { recoveryAdapter } from './recovery-adapter.js'
import { WriteBatch } from './write-batch.js'

export interface SocketIoOptions {
  /** Largest accepted message in bytes; a bigger one closes the connection (socket.io maxHttpBufferSize). */
  maxMessageSize?: number
  /** Calls one connection may have in flight; more are answered with 429 TooManyRequests. */
  maxConcurrentCalls?: number
  logger?: Logger
  /** Decides when a connection's token expires; the composition root passes the app's Clock. */
  clock?: Clock
  /**
   * How long a dropped connection may stay away and be recovered, in ms (SOCKET_RECOVERY_WINDOW);
   * 0 or unset: off. It needs an app that keeps an event history (AppOptions.recovery).
   */
  recoveryWindowMs?: number
  /** Passed to socket.io as is (e.g. `cors`). */
  server?: Partial<ServerOptions>
}

type Ack = (...args: unknown[]) => void

/**
 * The event that hands a client an offset when no service event did (docs/wire-protocol.md, Connection state recovery).
 */
export const OFFSET_EVENT = 'plumage:offset'

/** socket.io's disconnect reasons after which the client may come back (the others are a deliberate disconnect). */
const LOST_REASONS = new Set([
  'transport error',
  'transport close',
  'forced close',
  'ping timeout',
  'server shutting down',
  'forced server close'
])

/**
 * The socket.io transport on an existing HTTP server (the one REST listens on): Feathers socket
 * calls, socket authentication and delivery of published events. Closing the HTTP server (or
 * `io.close()`, which closes it) detaches it from the app.
 */
export function attachSocketIo(app: App, httpServer: HttpServer, options: SocketIoOptions = {}): Server {
  const logger = options.logger ?? silentLogger
  const maxConcurrentCalls = options.maxConcurrentCalls ?? 100
  const gateway = app.gateway(options.clock ? { clock: options.clock } : {})
  const windowMs = gateway.recovers ? (options.recoveryWindowMs ?? 0) : 0
  const connections = new WeakMap<Socket, Connection>()
  const sockets = new WeakMap<Connection, Socket>()
  /** Sockets closed because their session was resumed by a new socket: their session lives on. */
  const replaced = new WeakSet<Socket>()
  /** Ids of sockets being restored: they get offsets from their replay, not from the refresh. */
  const restoring = new Set<string>()
  const io = new Server(httpServer, {
    serveClient: false,
    ...options.server,
    maxHttpBufferSize: options.maxMessageSize ?? 1e6,
    ...(windowMs > 0
      ? {
          connectionStateRecovery: { maxDisconnectionDuration: windowMs, skipMiddlewares: true },
          adapter: recoveryAdapter({
            restore: async (pid, offset) => {
              const restorable = await gateway.restorable(pid, offset, 'socketio')
              return restorable && { sid: restorable.session.connectionId, data: { restorable } }
            },
            replace: (stale) => {
              const socket = stale as Socket
              replaced.add(socket)
              socket.disconnect(true)
            }
          })
        }
      : {})
  })
  const batch = new WriteBatch()

  function connectionOf(socket: Socket): Connection {
    const connection: Connection = { provider: 'socketio', headers: socket.handshake.headers }
    // For login throttling (params.connection.address); not enumerable, so calls' params keep their shape.
    Object.defineProperty(connection, 'address', { value: socket.handshake.address, enumerable: false })
    connections.set(socket, connection)
    sockets.set(connection, socket)
    return connection
  }

  io.use((socket, next) => {
    const connection = connectionOf(socket)
    // The session is stored before socket.io sends the client its ids: a client that reconnects at once finds it.
    tracedHandshake(gateway, socket.handshake.headers, () => gateway.handshake(connection))
      .then(() => (windowMs > 0 ? remember(socket, connection) : undefined))
      .then(
        () => next(),
        (thrown: unknown) => {
          const error = convertError(thrown)
          if (!(thrown instanceof FeathersError))
            logger.error('socket handshake authentication failed', { error: thrown })
          // socket.io sends `message` and `data` to the client as its `connect_error`.
          next(Object.assign(new Error(error.message), { data: error.data }))
        }
      )
  })

  io.on('connection', (socket) => {
    let inFlight = 0
    // A recovered socket skipped the middleware: its connection is made here and restored by the gateway.
    const restorable = socket.recovered ? (socket.data as { restorable?: Restorable }).restorable : undefined
    const connection = restorable ? connectionOf(socket) : connections.get(socket)!
    let restored: Promise<void> | undefined
    if (restorable) {
      socket.data = {}
      restoring.add(socket.id)
      restored = gateway
        .restore(connection, restorable)
        .catch((error: unknown) => {
          // The client must not go on as if it had everything: dropping the transport makes it reconnect and try again.
          logger.error('could not restore a socket connection', { error })
          socket.conn.close()
        })
        .finally(() => restoring.delete(socket.id))
    } else {
      // Before the connection joins any channel: no event can reach it first with a later offset.
      if (windowMs > 0) socket.emit(OFFSET_EVENT, gateway.head())
      gateway.open(connection)
    }
    socket.on('disconnect', (reason) => {
      gateway.close(connection, replaced.has(socket) ? 'replaced' : LOST_REASONS.has(reason) ? 'lost' : 'closed')
    })
    socket.onAny((event: unknown, ...args: unknown[]) => {
      const ack = typeof args[args.length - 1] === 'function' ? (args.pop() as Ack) : undefined
      if (inFlight >= maxConcurrentCalls) {
        const error = new TooManyRequests(
          `Too many concurrent calls on this connection (limit ${maxConcurrentCalls}); wait for answers before sending more`
        )
        return answer(ack, error.toJSON())
      }
      inFlight++
      const run = () =>
        event === 'authenticate'
          ? gateway.authenticate(connection, args[0])
          : event === 'logout'
            ? gateway.logout(connection)
            : dispatchCall(gateway, connection, event, args[0], args.slice(1))
      // Unexpected errors are logged inside the call's span, so the line carries its trace id. Calls
      // sent as soon as a recovered socket opened run once it is restored (logged in, channels joined).
      const traced = () =>
        tracedCall(gateway, event, args[0], () =>
          run().catch((thrown: unknown) => {
            if (!(thrown instanceof FeathersError))
              logger.error('socket call failed', { event: String(event), error: thrown })
            throw thrown
          })
        )
      const call = restored ? restored.then(traced) : traced()
      call
        .then(
          (result) => answer(ack, null, result === undefined ? null : result),
          (thrown: unknown) => answer(ack, convertError(thrown).toJSON())
        )
        .finally(() => inFlight--)
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
      // The offset goes last: socket.io clients keep the last string argument of an event as the offset to resume from.
      if (windowMs > 0 && delivery.offset !== undefined)
        io.to(ids).emit(`${delivery.path} ${delivery.event}`, delivery.data, delivery.offset)
      else io.to(ids).emit(`${delivery.path} ${delivery.event}`, delivery.data)
    } catch (error) {
      logger.error('could not send an event to sockets', { path: delivery.path, event: delivery.event, error })
    }
  })

  let refresh: ReturnType<typeof setInterval> | undefined
  if (windowMs > 0) {
    gateway.onOffset((connection, offset) => sockets.get(connection)?.emit(OFFSET_EVENT, offset))
    // A client that receives no event keeps an old offset; the head keeps it within the history.
    refresh = setInterval(() => io.except([...restoring]).emit(OFFSET_EVENT, gateway.head()), offsetRefreshMs(windowMs))
    refresh.unref()
  }

  httpServer.once('close', () => {
    clearInterval(refresh)
    gateway.shutdown()
  })

  async function remember(socket: Socket, connection: Connection): Promise<void> {
    const pid = (socket as unknown as { pid?: string }).pid
    if (pid === undefined) return
    try {
      await gateway.remember(connection, { id: pid, connectionId: socket.id })
    } catch (error) {
      // The connection works; it just cannot be recovered.
      logger.error('could not save a socket session', { error })
    }
  }

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

/**
 * Closes every socket's transport, as a server that goes away does (SIGTERM): clients reconnect by
 * themselves and, within the recovery window, resume where they were on whichever instance answers.
 * (`disconnectSockets(true)` would tell them the server disconnected them, and they would not come back.)
 */
export function dropConnections(io: Server): void {
  for (const socket of io.of('/').sockets.values()) socket.conn.close()
}
