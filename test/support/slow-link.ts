import type { Socket } from 'socket.io-client'
import type { SocketLike } from '../../src/interfaces/client/socket/socketio-transport.js'

type Listener = (...args: unknown[]) => void

/**
 * A socket.io-client socket as a client on a slow link sees it: everything it receives — events, live frames and
 * acks — reaches the client `ms` later, in the order it arrived. A client's write that does not wait for such a
 * socket's views resolves before they show it.
 */
export function slowLink(socket: Socket, ms: number): SocketLike {
  const later =
    (listener: Listener): Listener =>
    (...args) =>
      void setTimeout(() => listener(...args), ms)
  const wrapped = new Map<Listener, Listener>()
  return {
    get connected() {
      return socket.connected
    },
    get recovered() {
      return socket.recovered
    },
    emit(event, ...args) {
      const last = args.at(-1)
      if (typeof last === 'function') args[args.length - 1] = later(last as Listener)
      return socket.emit(event, ...args)
    },
    on(event, listener) {
      const delayed = wrapped.get(listener) ?? later(listener)
      wrapped.set(listener, delayed)
      return socket.on(event, delayed)
    },
    off(event, listener) {
      return socket.off(event, wrapped.get(listener) ?? listener)
    }
  }
}
