import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RunningServer {
  readonly server: Server
  /** e.g. http://127.0.0.1:3030 (the real port when listening on 0). */
  readonly url: string
  /** Graceful stop: refuse new connections, let in-flight requests finish, then resolve. */
  close(): Promise<void>
}

/** While closing, how often connections that went idle are closed. */
const SWEEP_MS = 10

/**
 * Connections the kernel queues before the server accepts them (node's default is 511; the kernel caps it at
 * net.core.somaxconn). When thousands of sockets reconnect at once (an instance restarts, a network comes back),
 * a short queue overflows and each refused client waits for its retry: bench:scale measured a 5,000-socket
 * reconnect storm at 22.0 s with 511 (37.9k overflows) and 17.7 s with 4096 (3.4k).
 */
const LISTEN_BACKLOG = 4096

/**
 * Listens with a plain node:http server (other transports, e.g. socket.io, attach to `server`).
 * `close` waits for in-flight requests for up to `graceMs`, then drops what is left.
 */
export function listen(handler: RequestListener, port: number, host: string, graceMs = 10_000): Promise<RunningServer> {
  return serve(createServer(handler), port, host, graceMs)
}

/**
 * The same for a server an HTTP engine created (fastify makes its own): both engines listen, and
 * stop, the same way.
 */
export function serve(server: Server, port: number, host: string, graceMs = 10_000): Promise<RunningServer> {
  let closing: Promise<void> | undefined
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), graceMs)
      force.unref()
      // A keep-alive connection that finished its response must not keep the server open (node leaves it open
      // until its keep-alive timeout): idle ones are closed every few ms while closing. Swept from here rather
      // than from a 'finish' listener on every response, which every request would pay for.
      const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS)
      sweep.unref()
      server.close(() => {
        clearTimeout(force)
        clearInterval(sweep)
        resolve()
      })
      server.closeIdleConnections()
    }))
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject)
      const { address, port: actual } = server.address() as AddressInfo
      const shown = address.includes(':') ? `[${address}]` : address
      resolve({ server, url: `http://${shown}:${actual}`, close })
    })
  })
}
