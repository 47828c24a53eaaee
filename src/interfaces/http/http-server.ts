import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RunningServer {
  readonly server: Server
  /** e.g. http://127.0.0.1:3030 (the real port when listening on 0). */
  readonly url: string
  /** Graceful stop: refuse new connections, let in-flight requests finish, then resolve. */
  close(): Promise<void>
}

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
  // A keep-alive connection that just finished its response must not keep the server open.
  server.on('request', (_req, res) =>
    res.on('finish', () => closing && setImmediate(() => server.closeIdleConnections()))
  )
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), graceMs)
      force.unref()
      server.close(() => {
        clearTimeout(force)
        resolve()
      })
      server.closeIdleConnections()
    }))
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const { address, port: actual } = server.address() as AddressInfo
      const shown = address.includes(':') ? `[${address}]` : address
      resolve({ server, url: `http://${shown}:${actual}`, close })
    })
  })
}
