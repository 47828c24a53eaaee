import 'reflect-metadata'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { writeHeapSnapshot } from 'node:v8'
import { Session } from 'node:inspector/promises'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MemoryService } from '@feathersjs/memory'
import { Server } from 'socket.io'
import { AdapterService } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import type { Connection } from '../../src/domain/service/service.js'
import { benchConfig } from './plumage-config.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { buildContainer, createHttpEngine, startRealtime } from '../../src/container.js'
import { BENCH_USER } from './auth-setup.js'
import { createFeathersReferenceApp } from './feathers-reference-app.js'

/**
 * One server of `npm run bench:scale` (bench/scale.ts), forked with an IPC channel and --expose-gc:
 * SCALE_SERVER=plumage (the app `npm start` serves on memory: src/container.ts, the reference app's
 * channels, connection state recovery on), feathers (the Feathers v5 reference app,
 * feathers-reference-app.ts), socketio (a bare socket.io server: every socket in one room, the
 * physical limit of fan-out) or floor (the same, an event written straight to each TCP socket:
 * startSocketIo). Both apps get two more open services: `ticks`, whose events go to the channel 'busy'
 * (or to 'authenticated' when the record says `all`), and `rooms`, whose `create` puts the caller's
 * connection in 'busy'. Answers the driver's messages: `stats` (heap after a full
 * GC, RSS, CPU), `memory` (heap and RSS as they are, no GC, and the open TCP connections: bench/slow-reader.ts
 * polls it), `cpu` (CPU only, no GC), `broadcast` (one `ticks created` to every socket, created
 * on the server), `records` (seeds `records` with n records), `snapshot` (a V8 heap snapshot after a
 * full GC, written to `file`), and replies with the same `id`. SCALE_PROFILE_DIR: see `profile`.
 */
type Command = {
  id: number
  type: 'stats' | 'memory' | 'cpu' | 'broadcast' | 'records' | 'snapshot'
  t?: number
  n?: number
  file?: string
}
type Started = {
  url: string
  token: string
  /** The server's open TCP connections (a socket it dropped is one fewer). */
  connections(): Promise<number>
  broadcast(t: number): Promise<void>
  records(n: number): Promise<void>
}

const kind = process.env.SCALE_SERVER ?? 'plumage'
const gc = (globalThis as { gc?: () => void }).gc!

/**
 * SCALE_PROFILE_DIR: a CPU profile between the first two `cpu` asks (the broadcast phase of bench:scale), written
 * there as <kind>-<pid>.cpuprofile: where fan-out's CPU goes, without the connections' handshakes around it.
 */
const profileDir = process.env.SCALE_PROFILE_DIR
let profiler: Session | undefined
let profiled = false
async function profile(): Promise<void> {
  if (!profileDir || profiled) return
  if (!profiler) {
    profiler = new Session()
    profiler.connect()
    await profiler.post('Profiler.enable')
    await profiler.post('Profiler.setSamplingInterval', { interval: 100 })
    await profiler.post('Profiler.start')
    return
  }
  const { profile: result } = await profiler.post('Profiler.stop')
  profiled = true
  profiler.disconnect()
  writeFileSync(join(profileDir, `${kind}-${process.pid}.cpuprofile`), JSON.stringify(result))
}

async function startPlumage(): Promise<Started> {
  const config = benchConfig()
  const container = await buildContainer(config)
  const app = container.get<App>(App)
  app.use('ticks', new AdapterService(new InMemoryStore()))
  app.use('records', new AdapterService(new InMemoryStore(), { paginate: { default: 10, max: 50 }, multi: ['create'] }))
  app.use('rooms', {
    async create(data: Record<string, unknown>, params?: { connection?: Connection }) {
      if (params?.connection) app.channel('busy').join(params.connection)
      return data
    }
  })
  app
    .service('ticks')
    .publish((data) => ((data as { all?: boolean }).all ? app.channel('authenticated') : app.channel('busy')))
  app.service('rooms').publish(() => null)
  app.service('records').publish(() => null)
  await app.setup()
  const engine = createHttpEngine(container)
  startRealtime(container, engine.server)
  const http = await engine.listen(0, '127.0.0.1')
  await app.service('users').create(BENCH_USER)
  const { accessToken } = (await app.service('authentication').create({ strategy: 'local', ...BENCH_USER })) as {
    accessToken: string
  }
  return {
    url: http.url,
    token: accessToken,
    connections: () => connectionsOf(engine.server),
    broadcast: async (t) => void (await app.service('ticks').create({ t, all: true })),
    records: (n) => seed(app.service('records') as { create(data: unknown): Promise<unknown> }, n)
  }
}

async function startFeathers(): Promise<Started> {
  const app = createFeathersReferenceApp()
  const channels = app as unknown as { channel(name: string): { join(connection: unknown): void } }
  app.use('ticks', new MemoryService() as never)
  app.use('records', new MemoryService({ paginate: { default: 10, max: 50 }, multi: ['create'] }) as never)
  app.use('rooms', {
    async create(data: Record<string, unknown>, params?: { connection?: unknown }) {
      if (params?.connection) channels.channel('busy').join(params.connection)
      return data
    }
  } as never)
  const service = (path: string) => app.service(path) as unknown as { publish(fn: (data: unknown) => unknown): void }
  service('ticks').publish((data) =>
    (data as { all?: boolean }).all ? channels.channel('authenticated') : channels.channel('busy')
  )
  service('rooms').publish(() => null)
  service('records').publish(() => null)
  const http = await app.listen(0, '127.0.0.1')
  if (!http.listening) await new Promise((resolve) => http.once('listening', resolve))
  await app.service('users').create(BENCH_USER)
  const { accessToken } = (await app
    .service('authentication')
    .create({ strategy: 'local', ...BENCH_USER })) as unknown as { accessToken: string }
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    token: accessToken,
    connections: () => connectionsOf(http),
    broadcast: async (t) => void (await app.service('ticks').create({ t, all: true })),
    records: (n) => seed(app.service('records') as unknown as Parameters<typeof seed>[0], n)
  }
}

/**
 * Every socket in the room 'all'; a login is answered (with no check) so clients run the same steps everywhere. With
 * `direct` (SCALE_SERVER=floor), an event to all is one websocket frame built once and written with one `write` on
 * each socket's TCP socket, past socket.io, engine.io and ws: the least any Node server can do per socket (one
 * net.Socket write, one syscall), with the same clients; not a server anyone would run (nothing checks that a
 * socket's engine.io or ws is idle).
 */
async function startSocketIo(direct = false): Promise<Started> {
  const http = createServer()
  const io = new Server(http, { serveClient: false, perMessageDeflate: false })
  io.on('connection', (socket) => {
    void socket.join('all')
    socket.on('create', (...args: unknown[]) => {
      const ack = args.at(-1)
      if (typeof ack === 'function') ack(null, { accessToken: 'none' })
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  let id = 0
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    token: 'none',
    connections: () => connectionsOf(http),
    broadcast: direct
      ? async (t) => writeToAll(io, ['ticks created', { t, all: true, id: id++ }])
      : async (t) => void io.to('all').emit('ticks created', { t, all: true, id: id++ }),
    records: async () => undefined
  }
}

/** A socket.io EVENT packet (`42[...]`) in one unmasked websocket text frame, written to every socket's TCP socket. */
function writeToAll(io: Server, args: unknown[]): void {
  const payload = Buffer.from(`42${JSON.stringify(args)}`)
  const header =
    payload.length < 126
      ? Buffer.from([0x81, payload.length])
      : Buffer.from([0x81, 126, payload.length >> 8, payload.length & 0xff])
  const frame = Buffer.concat([header, payload])
  type Transport = { socket?: { _socket?: { write(chunk: Buffer): boolean } } }
  for (const socket of io.of('/').sockets.values())
    (socket.conn.transport as unknown as Transport).socket?._socket?.write(frame)
}

function connectionsOf(http: { getConnections(done: (error: Error | null, count: number) => void): void }) {
  return new Promise<number>((resolve, reject) =>
    http.getConnections((error, count) => (error ? reject(error) : resolve(count)))
  )
}

async function seed(service: { create(data: unknown): Promise<unknown> }, n: number): Promise<void> {
  const batch = 1000
  for (let i = 0; i < n; i += batch)
    await service.create(
      Array.from({ length: Math.min(batch, n - i) }, (_, j) => ({ text: `record ${i + j}`, k: (i + j) % 1000 }))
    )
}

const starts: Record<string, () => Promise<Started>> = {
  plumage: startPlumage,
  feathers: startFeathers,
  socketio: () => startSocketIo(),
  floor: () => startSocketIo(true)
}
const server = await starts[kind]!()
process.on('message', (message: Command) => {
  const reply = (value: unknown) => process.send!({ id: message.id, value })
  if (message.type === 'stats') {
    gc()
    gc()
    const { heapUsed, rss } = process.memoryUsage()
    reply({ heapUsed, rss, cpu: process.cpuUsage() })
  } else if (message.type === 'memory') {
    const { heapUsed, rss } = process.memoryUsage()
    void server.connections().then((connections) => reply({ heapUsed, rss, connections }))
  } else if (message.type === 'cpu') {
    const cpu = process.cpuUsage()
    void profile().then(() => reply({ cpu }))
  } else if (message.type === 'snapshot') {
    gc()
    gc()
    reply(writeHeapSnapshot(message.file))
  } else if (message.type === 'broadcast') void server.broadcast(message.t!).then(() => reply(null))
  else void server.records(message.n!).then(() => reply(null))
})
process.once('SIGTERM', () => process.exit(0))
process.send!({ id: 0, value: { url: server.url, token: server.token } })
