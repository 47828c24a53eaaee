import type { Socket } from 'socket.io'
import type { Connection } from '../../domain/service/service.js'

/** The app's connection of each socket and back: what the handshake, dispatch and delivery share. */
export class SocketConnections {
  private readonly connections = new WeakMap<Socket, Connection>()
  private readonly sockets = new WeakMap<Connection, Socket>()
  /** Ids of sockets being restored: they get offsets from their replay, not from the periodic refresh. */
  readonly restoring = new Set<string>()

  /** The connection of a new socket, as the gateway and the services' params see it. */
  add(socket: Socket): Connection {
    const connection: Connection = { provider: 'socketio', headers: socket.handshake.headers }
    // For login throttling (params.connection.address); not enumerable, so calls' params keep their shape.
    Object.defineProperty(connection, 'address', { value: socket.handshake.address, enumerable: false })
    this.connections.set(socket, connection)
    this.sockets.set(connection, socket)
    return connection
  }

  connectionOf(socket: Socket): Connection | undefined {
    return this.connections.get(socket)
  }

  socketOf(connection: Connection): Socket | undefined {
    return this.sockets.get(connection)
  }
}
