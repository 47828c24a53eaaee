import { createServer, type Server } from 'node:net'
import { createInterface } from 'node:readline'
import type { App } from '../src/application/transport/index.js'
import { convertError } from '../src/domain/errors/convert-error.js'
import { BadRequest } from '../src/domain/errors/errors.js'
import type { Connection, NullableId, Query } from '../src/domain/service/service.js'

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
 * A transport in one file: newline-delimited JSON over TCP. Each line is a call answered by a line
 * `{"ref","result"}` or `{"ref","error"}`; published events arrive as `{"path","event","data"}` lines.
 * Everything else — routing, hooks, channels, logging connections in — happens behind the gateway.
 */
export function listenNdjson(app: App, port = 0): Promise<Server> {
  const gateway = app.gateway()
  const sockets = new Map<Connection, (line: unknown) => void>()
  gateway.onDelivery(({ path, event, data, connections }) => {
    for (const connection of connections) sockets.get(connection)?.({ path, event, data })
  })
  const server = createServer((socket) => {
    const connection: Connection = { provider: 'ndjson' }
    sockets.set(connection, (line) => socket.write(`${JSON.stringify(line)}\n`))
    gateway.open(connection)
    socket.on('close', () => {
      sockets.delete(connection)
      gateway.close(connection)
    })
    socket.on('error', () => socket.destroy())
    createInterface({ input: socket }).on('line', async (line) => {
      let request: Request = {}
      try {
        request = parseLine(line)
        const target = typeof request.path === 'string' ? gateway.resolve(request.path) : undefined
        if (!target || typeof request.method !== 'string')
          throw new BadRequest('Every line needs a known path and a method')
        const params = gateway.connectionParams(connection, request.query ?? {}, target.route)
        const { result } = await gateway.call({
          path: target.path,
          method: request.method,
          id: request.id,
          data: request.data,
          params
        })
        sockets.get(connection)?.({ ref: request.ref, result })
      } catch (error) {
        sockets.get(connection)?.({ ref: request.ref, error: convertError(error).toJSON() })
      }
    })
  })
  server.on('close', () => gateway.shutdown())
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)))
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

// `npm run example -- add-a-transport`: a `messages` service behind this transport, and one client
// that sends a line and reads the answer and the event. (The server side above needs none of these imports.)
export async function main(): Promise<void> {
  const { App: Application } = await import('../src/application/app.js')
  const { AdapterService } = await import('../src/application/adapter-service.js')
  const { InMemoryStore } = await import('../src/infrastructure/memory/in-memory-store.js')
  const { connect } = await import('node:net')
  const app = new Application()
  app.use('messages', new AdapterService(new InMemoryStore()))
  app.on('connection', (connection: Connection) => app.channel('everybody').join(connection))
  app.publish(() => app.channel('everybody'))
  await app.setup()
  const server = await listenNdjson(app)
  const socket = connect((server.address() as { port: number }).port, '127.0.0.1')
  socket.write(
    `${JSON.stringify({ ref: 1, path: 'messages', method: 'create', data: { text: 'Hello over ndjson' } })}\n`
  )
  let received = 0
  for await (const line of createInterface({ input: socket })) {
    console.log('ref' in JSON.parse(line) ? 'answer' : 'event', line)
    if (++received === 2) break
  }
  socket.destroy()
  await new Promise((resolve) => server.close(resolve))
  await app.teardown()
}
