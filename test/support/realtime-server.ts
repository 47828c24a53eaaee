import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { App } from '../../src/application/transport/index.js'
import type { RealtimeOptions, RealtimeTransportFactory } from '../../src/interfaces/realtime/realtime-transport.js'
import type { RealtimeClient, RunningRealtimeTransport } from '../../src/testing/realtime-transport.contract.js'

/**
 * `start` for the real-time transport contract: the transport's factory on a node HTTP server on
 * 127.0.0.1 (any free port; requests it does not take are 404s), as the composition root starts it
 * on an HTTP engine's server, and `connect(url, headers)` a client of its wire.
 */
export function startOnHttpServer(
  factory: RealtimeTransportFactory,
  connect: (url: string, headers?: Record<string, string>) => Promise<RealtimeClient>,
  options: RealtimeOptions = {}
): (app: App) => Promise<RunningRealtimeTransport> {
  return async (app) => {
    const server = createServer((_request, response) => response.writeHead(404).end())
    const transport = factory(app, server, options)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return {
      connect: (headers) => connect(url, headers),
      dropConnections: () => transport.dropConnections(),
      disconnectAll: () => transport.disconnectAll(),
      close: () => new Promise((resolve) => server.close(() => resolve()))
    }
  }
}
