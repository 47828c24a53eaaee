import type { Socket } from 'socket.io'
import type { Connection } from '../../domain/service/service.js'

/** The app's connection of each socket and back: what the handshake, dispatch and delivery share. */
export class SocketConnections {
  private readonly connections = new WeakMap<Socket, Connection>()
  /**
   * Where a connection keeps its socket: a property of its own (not enumerable, so calls' params, which spread the
   * connection, do not carry it), read by every delivery to every socket — a WeakMap lookup there cost each event
   * a hash probe per socket, and the table an entry per socket. A symbol of this transport's own.
   */
  private readonly socketKey = Symbol('socket')
  /** Ids of sockets being restored: they get offsets from their replay, not from the periodic refresh. */
  readonly restoring = new Set<string>()

  /** The connection of a new socket, as the gateway and the services' params see it. */
  add(socket: Socket): Connection {
    const connection: Connection = { provider: 'socketio', headers: socket.handshake.headers }
    // For login throttling (params.connection.address); not enumerable, so calls' params keep their shape.
    Object.defineProperty(connection, 'address', { value: socket.handshake.address, enumerable: false })
    Object.defineProperty(connection, this.socketKey, { value: socket, enumerable: false })
    this.connections.set(socket, connection)
    return connection
  }

  connectionOf(socket: Socket): Connection | undefined {
    return this.connections.get(socket)
  }

  socketOf(connection: Connection): Socket | undefined {
    return (connection as unknown as { [key: symbol]: Socket | undefined })[this.socketKey]
  }
}
