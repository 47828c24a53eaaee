import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket as TcpSocket } from 'node:net'
import type { Socket } from 'socket.io-client'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import type { Connection } from '../../../src/domain/service/service.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { metricsExtension, PrometheusMetrics } from '../../../src/infrastructure/metrics/index.js'
import { parseExposition, valueOf } from '../../support/prometheus-text.js'
import { connect, nextEvent, startSocketServer, type TestServer } from './support.js'

const MAX_BUFFERED_BYTES = 256 * 1024
const TEXT = 'x'.repeat(32 * 1024)
/** One event on the wire, with room for its id, event name, socket.io prefix and websocket frame header. */
const ONE_EVENT = TEXT.length + 200
/** Far more than the kernel's socket buffers and the bound hold: the loop always ends. */
const MAX_EVENTS = 2000

/** The TCP socket under a socket.io client's websocket (engine.io-client's ws transport). */
function tcpOf(socket: Socket): TcpSocket {
  return (socket.io.engine.transport as unknown as { ws: { _socket: TcpSocket } }).ws._socket
}

describe('a socket.io client that stops reading', () => {
  const metrics = new PrometheusMetrics({ defaultMetrics: false })
  const app = new App({ extensions: [metricsExtension(metrics)] })
  const warnings: { message: string; details?: Record<string, unknown> }[] = []
  const logger = {
    debug() {},
    info() {},
    warn: (message: string, details?: Record<string, unknown>) => warnings.push({ message, details }),
    error() {}
  }
  /** The server's end of every TCP connection, by the client's port. */
  const serverEnds = new Map<number, TcpSocket>()
  let server: TestServer

  beforeAll(async () => {
    app.use('messages', new AdapterService(new InMemoryStore()))
    app.on('connection', (connection: Connection) => app.channel('everybody').join(connection))
    app.publish(() => app.channel('everybody'))
    server = await startSocketServer(app, { logger, maxBufferedBytes: MAX_BUFFERED_BYTES })
    server.http.on('connection', (tcp: TcpSocket) => serverEnds.set(tcp.remotePort!, tcp))
  })
  afterAll(() => server.close())

  it('is disconnected once its pending output passes the bound, while the others receive every event', async () => {
    const reader = await connect(server.url)
    const slow = await connect(server.url)
    const slowTcp = tcpOf(slow)
    const slowServerEnd = serverEnds.get(slowTcp.localPort!)!
    expect(slowServerEnd).toBeDefined()
    const dropped = new Promise<Connection>((resolve) => app.once('disconnect', resolve))
    let gone = false
    void dropped.then(() => (gone = true))
    slowTcp.pause()

    const sent: unknown[] = []
    const received: unknown[] = []
    reader.on('messages created', (message: { id: unknown }) => received.push(message.id))
    let mostHeld = 0
    for (let i = 0; i < MAX_EVENTS && !gone; i++) {
      const arrived = nextEvent(reader, 'messages created')
      const message = (await app.service('messages').create({ text: TEXT })) as { id: unknown }
      sent.push(message.id)
      await arrived
      mostHeld = Math.max(mostHeld, slowServerEnd.writableLength)
    }

    expect(gone).toBe(true)
    expect(received).toEqual(sent)
    expect(reader.connected).toBe(true)
    // What the server held for the slow socket: in its TCP socket at every event, and all told when it was dropped.
    expect(mostHeld).toBeLessThanOrEqual(MAX_BUFFERED_BYTES + ONE_EVENT)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.message).toBe('disconnected a socket that stopped reading')
    const pendingBytes = warnings[0]!.details!.pendingBytes as number
    expect(pendingBytes).toBeGreaterThan(MAX_BUFFERED_BYTES)
    expect(pendingBytes).toBeLessThanOrEqual(MAX_BUFFERED_BYTES + ONE_EVENT)
    const scraped = parseExposition((await metrics.render()).body)
    expect(valueOf(scraped, 'plumage_connections_dropped_slow_total', { transport: 'socketio' })).toBe(1)

    // Reading again, the slow client finds its connection closed by the server.
    const reason = nextEvent<string>(slow, 'disconnect')
    slowTcp.resume()
    expect(await reason).toBe('transport close')
    expect(slowServerEnd.destroyed).toBe(true)
    reader.disconnect()
  })
})
