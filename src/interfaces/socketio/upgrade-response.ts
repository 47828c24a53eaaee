import type { IncomingMessage, Server as HttpServer } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Server } from 'socket.io'

type Listener = (...args: unknown[]) => void
type Upgraded = (webSocket: unknown, request: IncomingMessage) => void
/** ws's WebSocketServer, engine.io's `wsEngine`: what is extended of it here. */
type WebSocketServerClass = new (...args: any[]) => {
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, upgraded: Upgraded): void
}

/**
 * Lets go of each websocket's upgrade request and engine.io's response object for it, which would
 * otherwise live as long as the connection: engine.io wraps the TCP socket of an upgrade in a
 * response (for its middlewares) that listens to the socket's `close`, and that listener holds the
 * response and through it the IncomingMessage (its raw headers, streams state, query): ~1.4 KB of
 * heap per socket. Nothing listens to that response once the websocket is open (plumage registers
 * no engine.io middleware), so its `close` listener is removed then. What the connection needs of
 * the request (headers, address, query) socket.io copied into `socket.handshake`; engine.io's
 * `socket.conn.request` is let go of in handshake.ts.
 *
 * The `close` listeners to remove are those added to the TCP socket between the HTTP server's
 * `upgrade` event and ws taking the socket: listeners an app put on the socket before (e.g. to
 * track connections) stay. It goes through engine.io's `wsEngine` (a documented option), as a
 * subclass of the ws server engine.io would use, rebuilt with it.
 */
export function releaseUpgradeResponses(io: Server, httpServer: HttpServer): void {
  const before = new WeakMap<Duplex, Listener[]>()
  httpServer.prependListener('upgrade', (_request: IncomingMessage, socket: Duplex) => {
    before.set(socket, socket.rawListeners('close') as Listener[])
  })
  const engine = io.engine as unknown as { opts: { wsEngine: WebSocketServerClass }; init(): void }
  engine.opts.wsEngine = class extends engine.opts.wsEngine {
    override handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, upgraded: Upgraded): void {
      const kept = before.get(socket) ?? []
      before.delete(socket)
      const response = (socket.rawListeners('close') as Listener[]).filter((listener) => !kept.includes(listener))
      super.handleUpgrade(request, socket, head, (webSocket, upgradedRequest) => {
        for (const listener of response) socket.removeListener('close', listener)
        upgraded(webSocket, upgradedRequest)
      })
    }
  }
  // engine.io built its ws server when socket.io attached it (and builds it again when the HTTP server starts
  // listening): build it now with the new class.
  engine.init()
}
