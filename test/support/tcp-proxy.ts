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
  let server: Server
  let port = 0

  const listen = () => new Promise<void>((resolve, reject) => {
    server = createServer((client) => {
      const upstream = connect({ host: targetHost, port: targetPort })
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
        socket.on('error', () => { client.destroy(); upstream.destroy() })
      }
      client.pipe(upstream)
      upstream.pipe(client)
    })
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      port = (server.address() as { port: number }).port
      resolve()
    })
  })
  const stop = () => new Promise<void>((resolve) => {
    for (const socket of sockets) socket.destroy()
    server.close(() => resolve())
  })

  await listen()
  return {
    get port() { return port },
    cut: stop,
    restore: listen,
    close: stop
  }
}
