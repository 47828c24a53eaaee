import { createServer, connect, type Server, type Socket } from 'node:net'

/**
 * A loopback TCP proxy a test controls: `cut()` drops every connection and refuses new ones (the
 * server "goes away"), `restore()` listens again on the same port (the server "comes back").
 * It lets a test restart a database as its clients see it, whatever runs the database.
 */
export interface TcpProxy {
  port: number
  cut(): Promise<void>
  restore(): Promise<void>
  close(): Promise<void>
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0

  // Idempotent both ways: restoring a listening proxy (or cutting a cut one) changes nothing.
  const listen = () => new Promise<void>((resolve, reject) => {
    if (server) return resolve()
    const listening = createServer((client) => {
      const upstream = connect({ host: targetHost, port: targetPort })
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
        socket.on('error', () => { client.destroy(); upstream.destroy() })
      }
      client.pipe(upstream)
      upstream.pipe(client)
    })
    listening.once('error', reject)
    listening.listen(port, '127.0.0.1', () => {
      port = (listening.address() as { port: number }).port
      server = listening
      resolve()
    })
  })
  const stop = () => new Promise<void>((resolve) => {
    for (const socket of sockets) socket.destroy()
    const closing = server
    server = undefined
    if (!closing) return resolve()
    closing.close(() => resolve())
  })

  await listen()
  return {
    get port() { return port },
    cut: stop,
    restore: listen,
    close: stop
  }
}
