/**
 * Real-time fan-out: 50 socket.io clients receive the `messages created` events of 500 creates sent
 * by one more socket client, plumage's socket transport vs @feathersjs/socketio +
 * @feathersjs/memory with the same channel setup (every connection in one channel, everything
 * published to it), measured in the same run. The receivers live in a worker thread so their decoding
 * does not share the server's event loop. Throughput is measured saturated (20 creates in flight);
 * latency with one create in flight, since under saturation it only measures the receivers' backlog.
 * Latency = receive time − the `t` stamped into the created
 * record (both `performance.timeOrigin + performance.now()`, comparable across threads).
 * Goal (issue 6): events/s ≥ Feathers, p99 ≤ 0.8×.
 */
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads'
import { feathers } from '@feathersjs/feathers'
import { MemoryService } from '@feathersjs/memory'
import socketioServer from '@feathersjs/socketio'
import { io as connectClient, type Socket } from 'socket.io-client'
import { AdapterService } from '../src/application/adapter-service.js'
import { App } from '../src/application/app.js'
import type { Connection } from '../src/domain/service/service.js'
import { InMemoryStore } from '../src/infrastructure/memory/in-memory-store.js'
import { attachSocketIo } from '../src/interfaces/socketio/attach-socket-io.js'
import { printTable, writeResults } from './support/measure.js'

const RECEIVERS = 50
const CREATES = 500
const IN_FLIGHT = 20
const ROUNDS = 5

interface Running { url: string; close(): Promise<void> }

async function startPlumage(): Promise<Running> {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()))
  app.on('connection', (connection: Connection) => app.channel('authenticated').join(connection))
  app.publish(() => app.channel('authenticated'))
  const http = createServer()
  const io = attachSocketIo(app, http)
  return { url: await listen(http), close: () => new Promise((resolve) => { void io.close(() => resolve()) }) }
}

async function startFeathers(): Promise<Running> {
  const app = feathers()
  app.configure(socketioServer())
  app.use('messages', new MemoryService())
  // Channel methods come from @feathersjs/transport-commons' type augmentation, not loaded here.
  const channels = app as unknown as { channel(name: string): { join(connection: unknown): void }; publish(fn: () => unknown): void }
  app.on('connection', (connection) => channels.channel('authenticated').join(connection))
  channels.publish(() => channels.channel('authenticated'))
  const http = await app.listen(0)
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => { void (app as unknown as { io: { close(done: () => void): void } }).io.close(() => resolve()) })
      await app.teardown()
    }
  }
}

function listen(http: HttpServer): Promise<string> {
  return new Promise((resolve) => http.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(http.address() as AddressInfo).port}`)))
}

function connect(url: string): Promise<Socket> {
  const socket = connectClient(url, { transports: ['websocket'], reconnection: false, forceNew: true })
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket))
    socket.once('connect_error', reject)
  })
}

const now = () => performance.timeOrigin + performance.now()

/** Worker side: connects the receivers and reports every delivery latency once all events arrived. */
async function receive({ url, expected }: { url: string; expected: number }): Promise<void> {
  const receivers = await Promise.all(Array.from({ length: RECEIVERS }, () => connect(url)))
  const latencies = new Float64Array(expected * RECEIVERS)
  let count = 0
  for (const socket of receivers) {
    socket.on('messages created', (data: { t: number }) => {
      const at = now()
      latencies[count++] = at - data.t
      if (count === latencies.length) {
        for (const receiver of receivers) receiver.disconnect()
        parentPort!.postMessage({ latencies, lastEvent: at })
      }
    })
  }
  parentPort!.postMessage('ready')
}

async function run(start: () => Promise<Running>, creates: number, inFlight: number) {
  const server = await start()
  const worker = new Worker(new URL(import.meta.url), { workerData: { url: server.url, expected: creates } })
  const messages: unknown[] = []
  const waiters: ((message: unknown) => void)[] = []
  worker.on('message', (message) => (waiters.shift() ?? ((m: unknown) => messages.push(m)))(message))
  const next = () => messages.length > 0 ? Promise.resolve(messages.shift()) : new Promise<unknown>((resolve) => waiters.push(resolve))
  await next()
  const creator = await connect(server.url)
  const started = now()
  let sent = 0
  const send = (): Promise<void> => sent >= creates ? Promise.resolve() : new Promise<void>((resolve) => {
    sent++
    creator.emit('create', 'messages', { text: 'hello everyone', t: now() }, {}, () => resolve(send()))
  })
  await Promise.all(Array.from({ length: inFlight }, send))
  const { latencies, lastEvent } = await next() as { latencies: Float64Array; lastEvent: number }
  creator.disconnect()
  await worker.terminate()
  await server.close()
  latencies.sort()
  return {
    eventsPerSecond: latencies.length / ((lastEvent - started) / 1000),
    p99: latencies[Math.floor(latencies.length * 0.99)]!,
    p50: latencies[Math.floor(latencies.length * 0.5)]!
  }
}

if (!isMainThread) {
  await receive(workerData as { url: string; expected: number })
} else {
const frameworks = { plumage: startPlumage, feathers: startFeathers }
for (const start of Object.values(frameworks)) await run(start, 100, IN_FLIGHT)
type Result = Awaited<ReturnType<typeof run>>
const results: Record<string, { saturated: Result[]; paced: Result[] }> = { plumage: { saturated: [], paced: [] }, feathers: { saturated: [], paced: [] } }
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, start] of Object.entries(frameworks)) {
    results[name]!.saturated.push(await run(start, CREATES, IN_FLIGHT))
    results[name]!.paced.push(await run(start, CREATES, 1))
  }
}
/** Medians over rounds, so one hiccup of a shared machine does not decide the comparison. */
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const summary = (name: string) => ({
  eventsPerSecond: median(results[name]!.saturated.map((r) => r.eventsPerSecond)),
  p50: median(results[name]!.paced.map((r) => r.p50)),
  p99: median(results[name]!.paced.map((r) => r.p99))
})
const anchor = summary('feathers')
const ours = summary('plumage')
const rows = [
  { framework: '@feathersjs/socketio (anchor)', 'events/s': anchor.eventsPerSecond, 'p50 ms': anchor.p50, 'p99 ms': anchor.p99, 'events/s ratio': 1, 'p99 ratio': 1 },
  {
    framework: 'plumage socket.io', 'events/s': ours.eventsPerSecond, 'p50 ms': ours.p50, 'p99 ms': ours.p99,
    'events/s ratio': ours.eventsPerSecond / anchor.eventsPerSecond, 'p99 ratio': ours.p99 / anchor.p99
  }
]
printTable(`${RECEIVERS} socket clients × ${CREATES} creates; events/s with ${IN_FLIGHT} in flight, latency with 1 in flight; median of ${ROUNDS} rounds — goal: events/s ratio ≥ 1, p99 ratio ≤ 0.8`, rows)
writeResults('socket', rows)
process.exit(0)
}
