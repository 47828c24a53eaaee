import { createServer, connect, type Server, type Socket } from 'node:net'

/**
 * A loopback TCP proxy a test controls: `cut()` drops every connection and refuses new ones (the
 * server "goes away"), `restore()` listens again on the same port (the server "comes back").
 * It lets a test restart a database as its clients see it, whatever runs the database.
 * `silence()` drops the connections on the clients' side only: the server hears nothing more on
 * them but is not told they are gone (a mobile network that vanished), until `close()`.
 * `retarget(port)` sends new connections elsewhere (a load balancer moving a client to another instance).
 * `hold()` stops passing the server's bytes to the clients (they wait in the proxy, new connections too) until the
 * next `cut()` drops them: a reply the server sent but the client never got.
 */
export interface TcpProxy {
  port: number
  cut(): Promise<void>
  silence(): void
  retarget(port: number): void
  hold(): void
  restore(): Promise<void>
  close(): Promise<void>
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  const pairs = new Set<{ client: Socket; upstream: Socket }>()
  /** Server-side ends of silenced connections, left open until close(). */
  const silenced = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  let upstreamPort = targetPort
  let held = false

  // Idempotent both ways: restoring a listening proxy (or cutting a cut one) changes nothing.
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      if (server) return resolve()
      const listening = createServer((client) => {
        const upstream = connect({ host: targetHost, port: upstreamPort })
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('close', () => sockets.delete(socket))
          socket.on('error', () => {
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream)
        if (held) upstream.pause()
        else upstream.pipe(client)
        const pair = { client, upstream }
        pairs.add(pair)
        client.on('close', () => pairs.delete(pair))
      })
      listening.once('error', reject)
      listening.listen(port, '127.0.0.1', () => {
        port = (listening.address() as { port: number }).port
        server = listening
        resolve()
      })
    })
  const stop = () =>
    new Promise<void>((resolve) => {
      held = false
      for (const socket of sockets) socket.destroy()
      const closing = server
      server = undefined
      if (!closing) return resolve()
      closing.close(() => resolve())
    })

  const silence = () => {
    for (const { client, upstream } of pairs) {
      client.unpipe(upstream)
      upstream.unpipe(client)
      sockets.delete(upstream)
      silenced.add(upstream)
      client.destroy()
    }
  }

  await listen()
  return {
    get port() {
      return port
    },
    cut: stop,
    silence,
    retarget: (next: number) => {
      upstreamPort = next
    },
    hold: () => {
      held = true
      for (const { client, upstream } of pairs) {
        upstream.unpipe(client)
        upstream.pause()
      }
    },
    restore: listen,
    async close() {
      for (const upstream of silenced) upstream.destroy()
      silenced.clear()
      await stop()
    }
  }
}
