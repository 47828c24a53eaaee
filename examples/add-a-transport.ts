import type { IncomingMessage } from 'node:http'
import { connect, type Socket } from 'node:net'
import { createInterface } from 'node:readline'
import { convertError } from '../src/domain/errors/convert-error.js'
import { BadRequest, NotFound } from '../src/domain/errors/errors.js'
import type { Connection, NullableId, Query } from '../src/domain/service/service.js'
import { Gateway } from '../src/application/transport/index.js'
import type { RealtimeTransportFactory } from '../src/interfaces/realtime/realtime-transport.js'

/** One request line: `{"ref":1,"path":"messages","method":"create","data":{"text":"hi"}}`. */
interface Request {
  ref?: unknown
  path?: unknown
  method?: unknown
  id?: NullableId
  data?: unknown
  query?: Query
}

/**
 * A real-time transport in one file: newline-delimited JSON over TCP, on the HTTP server's port. A
 * client asks for it with `Upgrade: ndjson` (an `Authorization: Bearer` header logs the connection
 * in); then each line it sends is a call answered by a line `{"ref","result"}` or `{"ref","error"}`,
 * and published events arrive as `{"path","event","data"}` lines. Everything else — routing, hooks,
 * channels, logging connections in and out — happens behind the gateway.
 */
export const ndjsonTransport: RealtimeTransportFactory = (app, server, options) => {
  const gateway = new Gateway(app, options.clock ? { clock: options.clock } : {})
  const sockets = new Map<Connection, Socket>()
  const send = (connection: Connection, line: unknown) => sockets.get(connection)?.write(`${JSON.stringify(line)}\n`)
  gateway.onDelivery(({ path, event, data, connections }) => {
    for (const connection of connections) send(connection, { path, event, data })
  })
  server.on('upgrade', async (request: IncomingMessage, socket: Socket, head: Buffer) => {
    if (request.headers.upgrade?.toLowerCase() !== 'ndjson') return // another transport's (a websocket)
    socket.on('error', () => socket.destroy())
    socket.on('end', () => socket.end()) // the client left (HTTP servers keep sockets half open)
    const connection: Connection = { provider: 'ndjson', headers: request.headers }
    socket.on('close', () => {
      sockets.delete(connection)
      gateway.close(connection)
    })
    try {
      await gateway.handshake(connection)
    } catch (error) {
      const refused = convertError(error)
      const body = JSON.stringify(refused.toJSON())
      return socket.end(`HTTP/1.1 ${refused.code} ${refused.name}\r\nContent-Type: application/json\r\n\r\n${body}`)
    }
    if (socket.destroyed) return // gone while logging in
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: ndjson\r\nConnection: Upgrade\r\n\r\n')
    sockets.set(connection, socket)
    gateway.open(connection)
    if (head.length > 0) socket.unshift(head)
    createInterface({ input: socket }).on('line', async (line) => {
      let request: Request = {}
      try {
        request = parseLine(line)
        const target = typeof request.path === 'string' ? gateway.resolve(request.path) : undefined
        if (!target) throw new NotFound(`Service '${String(request.path)}' not found`)
        if (typeof request.method !== 'string') throw new BadRequest('Every line needs a method')
        const params = gateway.connectionParams(connection, request.query ?? {}, target.route)
        const { result } = await gateway.call({
          path: target.path,
          method: request.method,
          id: request.id,
          data: request.data,
          params
        })
        send(connection, { ref: request.ref, result })
      } catch (error) {
        send(connection, { ref: request.ref, error: convertError(error).toJSON() })
      }
    })
  })
  server.on('close', () => gateway.shutdown())
  return {
    dropConnections: () => sockets.forEach((socket) => socket.destroy()),
    disconnectAll: () => sockets.forEach((socket) => socket.end())
  }
}

function parseLine(line: string): Request {
  try {
    const request: unknown = JSON.parse(line)
    if (typeof request === 'object' && request !== null && !Array.isArray(request)) return request as Request
  } catch {
    // Answered below like any other line that is not a JSON object.
  }
  throw new BadRequest('Each line must be a JSON object')
}

/** A client of the transport: the open TCP socket and its lines, once the server switched protocols. */
export interface NdjsonClient {
  socket: Socket
  /** Every line after the switch, parsed, as it arrives. */
  lines: AsyncIterator<Record<string, unknown>>
  /** Sends one line: a value as JSON, a string as it is. */
  send(line: unknown): void
}

/**
 * Connects to an ndjson transport at `url` (`http://host:port`), with `headers` on the upgrade
 * request; rejects with the server's error message when it refuses the connection.
 */
export async function connectNdjson(url: string, headers: Record<string, string> = {}): Promise<NdjsonClient> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  socket.on('error', () => socket.destroy())
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`)
  socket.write(`GET / HTTP/1.1\r\nHost: ${hostname}\r\nConnection: Upgrade\r\nUpgrade: ndjson\r\n${extra.join('')}\r\n`)
  const read = createInterface({ input: socket })[Symbol.asyncIterator]()
  const status = (await read.next()).value as string | undefined
  while ((await read.next()).value) {
    // The response's headers, up to the empty line.
  }
  if (status?.startsWith('HTTP/1.1 101 ')) {
    const lines = (async function* () {
      for (let line = await read.next(); !line.done; line = await read.next())
        yield JSON.parse(line.value) as Record<string, unknown>
    })()
    return {
      socket,
      lines,
      send: (line) => socket.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`)
    }
  }
  const body = (await read.next()).value as string | undefined
  socket.destroy()
  throw new Error(body ? String((JSON.parse(body) as { message?: unknown }).message) : `refused: ${status}`)
}

// `npm run example -- add-a-transport`: a `messages` service behind this transport on a node HTTP
// server, and one client that sends a line and reads the answer and the event. (The transport above
// needs none of these imports.)
export async function main(): Promise<void> {
  const { App } = await import('../src/application/app.js')
  const { AdapterService } = await import('../src/application/adapter-service.js')
  const { InMemoryStore } = await import('../src/infrastructure/memory/in-memory-store.js')
  const { createServer } = await import('node:http')
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()))
  app.on('connection', (connection: Connection) => app.channel('everybody').join(connection))
  app.publish(() => app.channel('everybody'))
  await app.setup()
  const server = createServer()
  const transport = ndjsonTransport(app, server, {})
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const client = await connectNdjson(`http://127.0.0.1:${(server.address() as { port: number }).port}`)
  client.send({ ref: 1, path: 'messages', method: 'create', data: { text: 'Hello over ndjson' } })
  for (let received = 0; received < 2; received++) {
    const line = (await client.lines.next()).value as Record<string, unknown>
    console.log('ref' in line ? 'answer' : 'event', JSON.stringify(line))
  }
  client.socket.destroy()
  transport.disconnectAll()
  await new Promise((resolve) => server.close(resolve))
  await app.teardown()
}
