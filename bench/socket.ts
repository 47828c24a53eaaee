/**
 * Real-time fan-out: 50 socket.io clients receive the `messages created` events of 500 creates sent
 * by one more socket client, plumage's socket transport vs @feathersjs/socketio +
 * @feathersjs/memory with the same channel setup (every connection in one channel, everything
 * published to it), measured in the same run. The receivers live in a worker thread so their decoding
 * does not share the server's event loop. Latency = receive time − the `t` stamped into the created
 * record (both `performance.timeOrigin + performance.now()`, comparable across threads).
 *
 * - Throughput: one server at a time, saturated (20 creates in flight), rounds interleaved with the
 *   order flipped every round; median over rounds.
 * - Latency: both servers up at once with their 50 receivers each, one create in flight, creates going
 *   to the two servers in turn. A burst of load from other processes then hits both alike, which
 *   separate runs (a few seconds each) cannot promise; the p99 of each round is taken, then the median.
 *   (Under saturation latency would only measure the receivers' backlog.)
 *
 * Goal (issue 6): events/s ≥ Feathers, p99 ≤ 0.8×. The machine's load is printed beside the numbers.
 */
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { availableParallelism, loadavg } from 'node:os'
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads'
import { feathers } from '@feathersjs/feathers'
import { MemoryService } from '@feathersjs/memory'
import socketioServer from '@feathersjs/socketio'
import { io as connectClient, type Socket } from 'socket.io-client'
import { AdapterService } from '../src/application/adapter-service.js'
import { App } from '../src/application/app.js'
import type { Connection } from '../src/domain/service/service.js'
import { InMemoryStore } from '../src/infrastructure/memory/in-memory-store.js'
import { socketIoTransport } from '../src/interfaces/socketio/socketio-transport.js'
import { printTable, writeResults } from './support/measure.js'

const RECEIVERS = 50
const CREATES = 500
const IN_FLIGHT = 20
const ROUNDS = 7

interface Running {
  url: string
  close(): Promise<void>
}

async function startPlumage(): Promise<Running> {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()))
  app.on('connection', (connection: Connection) => app.channel('authenticated').join(connection))
  app.publish(() => app.channel('authenticated'))
  const http = createServer()
  const socketIo = socketIoTransport(app, http, {})
  return {
    url: await listen(http),
    close: () =>
      new Promise((resolve) => {
        socketIo.disconnectAll()
        http.close(() => resolve())
      })
  }
}

async function startFeathers(): Promise<Running> {
  const app = feathers()
  app.configure(socketioServer())
  app.use('messages', new MemoryService())
  // Channel methods come from @feathersjs/transport-commons' type augmentation, not loaded here.
  const channels = app as unknown as {
    channel(name: string): { join(connection: unknown): void }
    publish(fn: () => unknown): void
  }
  app.on('connection', (connection) => channels.channel('authenticated').join(connection))
  channels.publish(() => channels.channel('authenticated'))
  const http = await app.listen(0)
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        void (app as unknown as { io: { close(done: () => void): void } }).io.close(() => resolve())
      })
      await app.teardown()
    }
  }
}

function listen(http: HttpServer): Promise<string> {
  return new Promise((resolve) =>
    http.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(http.address() as AddressInfo).port}`))
  )
}

function connect(url: string): Promise<Socket> {
  const socket = connectClient(url, { transports: ['websocket'], reconnection: false, forceNew: true })
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket))
    socket.once('connect_error', reject)
  })
}

const now = () => performance.timeOrigin + performance.now()

/** Worker side: connects the receivers of every server and reports each server's latencies once all events arrived. */
async function receive({ urls, expected }: { urls: string[]; expected: number }): Promise<void> {
  const receivers = await Promise.all(urls.flatMap((url) => Array.from({ length: RECEIVERS }, () => connect(url))))
  const latencies = urls.map(() => new Float64Array(expected * RECEIVERS))
  const counts = urls.map(() => 0)
  const lastEvent = urls.map(() => 0)
  let missing = urls.length * expected * RECEIVERS
  receivers.forEach((socket, index) => {
    const server = Math.floor(index / RECEIVERS)
    socket.on('messages created', (data: { t: number }) => {
      const at = now()
      latencies[server]![counts[server]!++] = at - data.t
      lastEvent[server] = at
      if (--missing > 0) return
      for (const receiver of receivers) receiver.disconnect()
      parentPort!.postMessage({ latencies, lastEvent })
    })
  })
  parentPort!.postMessage('ready')
}

interface Result {
  eventsPerSecond: number
  p50: number
  p99: number
}

/** `creates` creates per server with `inFlight` in flight overall, sent to the servers in turn. */
async function run(starts: (() => Promise<Running>)[], creates: number, inFlight: number): Promise<Result[]> {
  const servers: Running[] = []
  for (const start of starts) servers.push(await start())
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { urls: servers.map((server) => server.url), expected: creates }
  })
  const messages: unknown[] = []
  const waiters: ((message: unknown) => void)[] = []
  worker.on('message', (message) => (waiters.shift() ?? ((m: unknown) => messages.push(m)))(message))
  const next = () =>
    messages.length > 0 ? Promise.resolve(messages.shift()) : new Promise<unknown>((resolve) => waiters.push(resolve))
  await next()
  const creators = await Promise.all(servers.map((server) => connect(server.url)))
  const started = now()
  let sent = 0
  const send = (): Promise<void> =>
    sent >= creates * servers.length
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const creator = creators[sent++ % creators.length]!
          creator.emit('create', 'messages', { text: 'hello everyone', t: now() }, {}, () => resolve(send()))
        })
  await Promise.all(Array.from({ length: inFlight }, send))
  const { latencies, lastEvent } = (await next()) as { latencies: Float64Array[]; lastEvent: number[] }
  for (const creator of creators) creator.disconnect()
  await worker.terminate()
  for (const server of servers) await server.close()
  return latencies.map((values, index) => {
    values.sort()
    return {
      eventsPerSecond: values.length / ((lastEvent[index]! - started) / 1000),
      p99: values[Math.floor(values.length * 0.99)]!,
      p50: values[Math.floor(values.length * 0.5)]!
    }
  })
}

export interface FanOutSummary {
  eventsPerSecond: number
  p50: number
  p99: number
}
type Name = 'plumage' | 'feathers'
const frameworks: Record<Name, () => Promise<Running>> = { plumage: startPlumage, feathers: startFeathers }

/** 1-minute load average per core: above 1 other processes competed for the CPU and tails are noise. */
export function loadPerCore(): number {
  return loadavg()[0]! / availableParallelism()
}

/**
 * Both frameworks (or only some, for profiling), rounds interleaved and the order flipped every round
 * so a drift of the machine's load hits both alike; medians over rounds. `npm run bench`
 * (bench/all.ts) calls this too.
 */
export async function fanOut(
  rounds = ROUNDS,
  only: Name[] = ['plumage', 'feathers']
): Promise<Record<Name, FanOutSummary> & { loads: number[] }> {
  for (const name of only) await run([frameworks[name]], 100, IN_FLIGHT)
  const results: Record<Name, { saturated: Result[]; paced: Result[] }> = {
    plumage: { saturated: [], paced: [] },
    feathers: { saturated: [], paced: [] }
  }
  const loads = [loadPerCore()]
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? only : [...only].reverse()
    for (const name of order) results[name].saturated.push(...(await run([frameworks[name]], CREATES, IN_FLIGHT)))
    const paced = await run(
      order.map((name) => frameworks[name]),
      CREATES,
      1
    )
    order.forEach((name, index) => results[name].paced.push(paced[index]!))
    loads.push(loadPerCore())
  }
  /** Medians over rounds, so one hiccup of a shared machine does not decide the comparison. */
  const median = (values: number[]) =>
    values.length === 0 ? NaN : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const summary = (name: Name): FanOutSummary => ({
    eventsPerSecond: median(results[name].saturated.map((r) => r.eventsPerSecond)),
    p50: median(results[name].paced.map((r) => r.p50)),
    p99: median(results[name].paced.map((r) => r.p99))
  })
  return { plumage: summary('plumage'), feathers: summary('feathers'), loads }
}

if (!isMainThread) {
  await receive(workerData as { urls: string[]; expected: number })
} else if (import.meta.url.endsWith('/socket.mjs')) {
  // Run as its own script (not bundled into another benchmark that imports fanOut).
  // `--only=plumage` runs one side, e.g. under `node --cpu-prof dist/bench/socket.mjs --only=plumage`.
  const onlyArgument = process.argv.find((argument) => argument.startsWith('--only='))?.slice('--only='.length)
  const only = (onlyArgument ? onlyArgument.split(',') : ['plumage', 'feathers']) as Name[]
  const rounds = Number(process.env.SOCKET_ROUNDS ?? ROUNDS)
  console.log(`load per core before: ${loadPerCore().toFixed(2)} (${availableParallelism()} cores)`)
  const { plumage: ours, feathers: anchor, loads } = await fanOut(rounds, only)
  const rows = [
    {
      framework: '@feathersjs/socketio (anchor)',
      'events/s': anchor.eventsPerSecond,
      'p50 ms': anchor.p50,
      'p99 ms': anchor.p99,
      'events/s ratio': 1,
      'p99 ratio': 1
    },
    {
      framework: 'plumage socket.io',
      'events/s': ours.eventsPerSecond,
      'p50 ms': ours.p50,
      'p99 ms': ours.p99,
      'events/s ratio': ours.eventsPerSecond / anchor.eventsPerSecond,
      'p99 ratio': ours.p99 / anchor.p99
    }
  ]
  printTable(
    `${RECEIVERS} socket clients × ${CREATES} creates; events/s with ${IN_FLIGHT} in flight, latency with 1 in flight; median of ${rounds} rounds (throughput: servers in turn; latency: both servers at once, creates alternating) — goal: events/s ratio ≥ 1, p99 ratio ≤ 0.8`,
    rows
  )
  const worst = Math.max(...loads)
  console.log(
    `load per core after each round (1-min average / ${availableParallelism()} cores): ${loads.map((load) => load.toFixed(2)).join(' ')}`
  )
  if (worst > 1)
    console.log(
      `NOISY RUN: load per core reached ${worst.toFixed(2)} (> 1): other processes competed for the CPU; tail latencies are not comparable`
    )
  writeResults('socket', [...rows, { framework: 'machine', 'max load per core (> 1: noisy)': worst }])
  process.exit(0)
}
