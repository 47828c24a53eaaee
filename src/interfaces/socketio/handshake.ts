import type { ServerOptions, Socket } from 'socket.io'
import type { Gateway, Restorable } from '../../application/transport/index.js'
import { convertError } from '../../domain/errors/convert-error.js'
import { FeathersError } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'
import type { Connection } from '../../domain/service/service.js'
import { OFFSET_EVENT } from './delivery.js'
import { recoveryAdapter } from './recovery-adapter.js'
import type { SocketConnections } from './socket-connections.js'
import type { AroundHandshake } from './call-extensions.js'

/** socket.io's disconnect reasons after which the client may come back (the others are a deliberate disconnect). */
const LOST_REASONS = new Set(
  'transport error|transport close|forced close|ping timeout|server shutting down|forced server close'.split('|')
)

/**
 * How a socket becomes one of the app's connections and stops being one: the login of its handshake
 * (an `Authorization` header), its session kept for connection state recovery, a recovered socket
 * restored (its login, channels and missed events), and the reason it went away.
 */
export class Handshake {
  /** Sockets closed because their session was resumed by a new socket: their session lives on. */
  private readonly replaced = new WeakSet<Socket>()

  constructor(
    private readonly gateway: Gateway,
    private readonly connections: SocketConnections,
    private readonly logger: Logger,
    /** The recovery window in ms; 0: connections are not recovered. */
    private readonly windowMs: number,
    /** The extensions around handshakes (tracing's server span), as one function (call-extensions.ts). */
    private readonly around: AroundHandshake
  ) {}

  /**
   * socket.io's options for connection state recovery, with the app's sessions and event history
   * (through the gateway) instead of socket.io's in-process store; none when recovery is off.
   */
  serverOptions(): Partial<ServerOptions> {
    if (this.windowMs === 0) return {}
    return {
      connectionStateRecovery: { maxDisconnectionDuration: this.windowMs, skipMiddlewares: true },
      adapter: recoveryAdapter({
        restore: async (pid, offset) => {
          const restorable = await this.gateway.recovery.restorable(pid, offset, 'socketio')
          return restorable && { sid: restorable.session.connectionId, data: { restorable } }
        },
        replace: (stale) => {
          const socket = stale as Socket
          this.replaced.add(socket)
          socket.disconnect(true)
        }
      })
    }
  }

  /**
   * The socket.io middleware of a new socket (a recovered one skips it): logs it in when it brought
   * an `Authorization` header, and stores its session before socket.io sends the client its ids, so
   * a client that reconnects at once finds it. A failed login refuses the socket with the error's
   * `message` and `data` (the client's `connect_error`).
   */
  readonly authenticate = (socket: Socket, next: (error?: Error) => void): void => {
    const connection = this.connections.add(socket)
    this.around(socket.handshake.headers, () => this.gateway.handshake(connection))
      .then(() => (this.windowMs > 0 ? this.remember(socket, connection) : undefined))
      .then(
        () => next(),
        (thrown: unknown) => {
          const error = convertError(thrown)
          if (!(thrown instanceof FeathersError))
            this.logger.error('socket handshake authentication failed', { error: thrown })
          next(Object.assign(new Error(error.message), { data: error.data }))
        }
      )
  }

  /**
   * A socket socket.io accepted: a new one opens (channels pick it up), a recovered one is restored
   * by the gateway. Resolves `restored` once a recovered socket may run calls (logged in, channels
   * joined); its end is reported with why it went away. The upgrade request is let go of here.
   */
  open(socket: Socket): { connection: Connection; restored?: Promise<void> } {
    forgetRequest(socket)
    const restorable = socket.recovered ? (socket.data as { restorable?: Restorable }).restorable : undefined
    const connection = restorable ? this.connections.add(socket) : this.connections.connectionOf(socket)!
    socket.on('disconnect', this.closed)
    if (!restorable) {
      // Before the connection joins any channel: no event can reach it first with a later offset.
      if (this.windowMs > 0) socket.emit(OFFSET_EVENT, this.gateway.recovery.head())
      this.gateway.open(connection)
      return { connection }
    }
    socket.data = {}
    const { restoring } = this.connections
    restoring.add(socket.id)
    const restored = this.gateway.recovery
      .restore(connection, restorable)
      .catch((error: unknown) => {
        // The client must not go on as if it had everything: dropping the transport makes it reconnect and try again.
        this.logger.error('could not restore a socket connection', { error })
        socket.conn.close()
      })
      .finally(() => restoring.delete(socket.id))
    return { connection, restored }
  }

  /**
   * A socket's end, told to the gateway with why it went away. One listener for every socket (called with the socket
   * as `this`, as EventEmitter listeners are), not a closure per socket.
   */
  private readonly closed = ((handshake: Handshake) =>
    function (this: Socket, reason: string): void {
      const why = handshake.replaced.has(this) ? 'replaced' : LOST_REASONS.has(reason) ? 'lost' : 'closed'
      handshake.gateway.close(handshake.connections.connectionOf(this)!, why)
    })(this)

  private async remember(socket: Socket, connection: Connection): Promise<void> {
    const pid = (socket as unknown as { pid?: string }).pid
    if (pid === undefined) return
    try {
      await this.gateway.recovery.remember(connection, { id: pid, connectionId: socket.id })
    } catch (error) {
      // The connection works; it just cannot be recovered.
      this.logger.error('could not save a socket session', { error })
    }
  }
}

/**
 * Lets go of a socket's upgrade request, which engine.io keeps for the socket's life (socket.io's "memory usage"
 * advice): the IncomingMessage holds its parser, buffers and TCP socket. What the connection needs of it — the
 * headers (with `Authorization`, read at the handshake) and the address — socket.io copied into `socket.handshake`
 * when the socket was made, before the handshake's middleware ran; `socket.request` is null afterwards.
 */
function forgetRequest(socket: Socket): void {
  ;(socket.conn as { request: unknown }).request = null
}
