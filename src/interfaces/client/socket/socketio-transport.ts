import { errorFromJson } from '../../../domain/errors/convert-error.js'
import { Timeout } from '../../../domain/errors/errors.js'
import { toArguments } from '../../../domain/service/method-layout.js'
import type { ServiceCall } from '../../../domain/service/service.js'
import type { ClientApp } from '../client-app.js'
import { fillRoute, writeOffsets, type Transport } from '../transport.js'

type Listener = (...args: unknown[]) => void

/** The part of a socket.io-client `Socket` this transport uses (the user passes the socket in). */
export interface SocketLike {
  /** socket.io-client: whether the socket is connected now, and whether its last connection resumed the one before. */
  connected?: boolean
  recovered?: boolean
  emit(event: string, ...args: unknown[]): unknown
  on(event: string, listener: Listener): unknown
  off(event: string, listener: Listener): unknown
}

export interface SocketioOptions {
  /** Milliseconds to wait for an answer before rejecting with a Timeout error; default 5000. */
  timeout?: number
}

/**
 * The socket.io transport for the client core: calls are `socket.emit(method, path, ...args, ack)`,
 * service events are the wire events `"<path> <event>"`. The socket's `connect`/`disconnect` are
 * re-emitted as client app events so plugins (the authentication client) can log in again after a
 * reconnect (not when the user closed the socket); calls made while disconnected are buffered by
 * socket.io and sent on reconnect. A reconnection the server did not resume (socket.io connection
 * state recovery: beyond the window, a session revoked meanwhile, recovery off) emits `events-lost`:
 * service events published meanwhile never arrived, so whatever the app shows must be fetched again.
 */
export class SocketioTransport implements Transport {
  readonly name = 'socketio'

  constructor(
    readonly socket: SocketLike,
    private readonly options: SocketioOptions = {}
  ) {}

  call(call: ServiceCall): Promise<unknown> {
    const path = fillRoute(call.path, call.params.route)
    const timeout = this.options.timeout ?? 5000
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new Timeout(`Timeout of ${timeout}ms exceeded calling ${call.method} on ${path}`, {
            timeout,
            method: call.method,
            path
          })
        )
      }, timeout)
      // The method's own argument layout, with the query (always sent, `{}` by default) in place of params.
      const args = toArguments(call.method, { id: call.id, data: call.data, last: call.params.query ?? {} })
      this.socket.emit(call.method, path, ...args, (error: unknown, result: unknown, offset?: unknown) => {
        clearTimeout(timer)
        if (error !== null && error !== undefined)
          reject(errorFromJson(typeof error === 'object' ? error : { message: String(error) }))
        else {
          // Read your writes: a write that asked for its offset has it after the result.
          if (typeof offset === 'string') writeOffsets.set(call.params, offset)
          resolve(result)
        }
      })
    })
  }

  /** Emits `event` with an ack (live queries' `watch`, `unwatch`): resolves with the answer, rejects with its error. */
  request(event: string, ...args: unknown[]): Promise<unknown> {
    return this.requestWithLate(() => undefined, event, ...args)
  }

  /**
   * As `request`; an answer that arrives after the request timed out (nothing waits for it any more) goes to `late`
   * — a live query's `watch` answered late is still running on the server, and the client unwatches it.
   */
  requestWithLate(late: (result: unknown) => void, event: string, ...args: unknown[]): Promise<unknown> {
    const timeout = this.options.timeout ?? 5000
    let timedOut = false
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        timedOut = true
        reject(new Timeout(`Timeout of ${timeout}ms exceeded on ${event}`))
      }, timeout)
      this.socket.emit(event, ...args, (error: unknown, result: unknown) => {
        clearTimeout(timer)
        if (error !== null && error !== undefined)
          reject(errorFromJson(typeof error === 'object' ? error : { message: String(error) }))
        else if (timedOut) late(result)
        else resolve(result)
      })
    })
  }

  /** Calls `listener` at each reconnection of the socket (the fence asks again then); returns the unsubscribe. */
  reconnected(listener: () => void): () => void {
    const connected = () => listener()
    this.socket.on('connect', connected)
    return () => this.socket.off('connect', connected)
  }

  /** Listens to a server event of its own name (live queries' `live` frames); returns the unsubscribe. */
  listen(event: string, listener: (data: unknown) => void): () => void {
    this.socket.on(event, listener)
    return () => this.socket.off(event, listener)
  }

  subscribe(path: string, event: string, emit: (data: unknown) => void): () => void {
    const listener = (data: unknown) => emit(data)
    const name = `${path} ${event}`
    this.socket.on(name, listener)
    return () => this.socket.off(name, listener)
  }
}

/** `client.configure(socketio(socket, { timeout }))`: makes the client talk over a socket.io socket. */
export function socketio(socket: SocketLike, options: SocketioOptions = {}): (client: ClientApp) => void {
  if (!socket || typeof socket.emit !== 'function')
    throw new Error('socketio(socket) needs a socket.io-client socket, e.g. io(url)')
  return (client) => {
    client.transport = new SocketioTransport(socket, options)
    let connectedBefore = socket.connected === true
    socket.on('connect', () => {
      client.emit('connect')
      if (connectedBefore && socket.recovered !== true) client.emit('events-lost')
      connectedBefore = true
    })
    // A socket the user closed does not come back, so nothing should wait to log in on it again.
    socket.on('disconnect', (reason) => {
      if (reason !== 'io client disconnect') client.emit('disconnect', reason)
    })
  }
}
