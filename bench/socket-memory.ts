/**
 * Memory per idle socket: 1,000 socket.io clients (websocket) connect and stay idle, to plumage's
 * socket transport and to @feathersjs/socketio with the same channel setup (every connection in one
 * channel). The clients live in a worker thread, whose heap is its own, so the server's heap growth
 * (V8 `heapUsed` after a full GC, before and after the sockets connected) divided by the sockets is
 * what each one keeps on the server's heap. Kernel socket buffers and the process's RSS are not in it.
 * Each measurement runs in a fresh process (servers in turn, ROUNDS each); the median is reported.
 *
 * Goal (issue 25): ≤ 40 KB per idle socket.
 */
import { execFileSync } from 'node:child_process'
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
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

const SOCKETS = 1000
const ROUNDS = 3
const SERVERS: Record<string, () => Promise<string>> = { plumage: startPlumage, 'Feathers v5': startFeathers }

function listen(http: HttpServer): Promise<string> {
  return new Promise((resolve) =>
    http.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(http.address() as AddressInfo).port}`))
  )
}

async function startPlumage(): Promise<string> {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()))
  app.on('connection', (connection: Connection) => app.channel('authenticated').join(connection))
  app.publish(() => app.channel('authenticated'))
  const http = createServer()
  socketIoTransport(app, http, {})
  return listen(http)
}

async function startFeathers(): Promise<string> {
  const app = feathers()
  app.configure(socketioServer())
  app.use('messages', new MemoryService())
  const channels = app as unknown as {
    channel(name: string): { join(connection: unknown): void }
    publish(fn: () => unknown): void
  }
  app.on('connection', (connection) => channels.channel('authenticated').join(connection))
  channels.publish(() => channels.channel('authenticated'))
  const http = await app.listen(0)
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`
}

/** The worker: opens the sockets one after another, says so, and keeps them until told to stop. */
async function clients(url: string): Promise<void> {
  const sockets: Socket[] = []
  for (let i = 0; i < SOCKETS; i++) {
    const socket = connectClient(url, { transports: ['websocket'], reconnection: false, forceNew: true })
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('connect_error', reject)
    })
    sockets.push(socket)
  }
  parentPort!.postMessage('connected')
  parentPort!.once('message', () => {
    for (const socket of sockets) socket.disconnect()
    parentPort!.close()
  })
}

function heapAfterGc(gc: () => void): number {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** One measurement in this process (started with --expose-gc): bytes of heap per idle socket. */
async function measure(start: () => Promise<string>, gc: () => void): Promise<number> {
  const url = await start()
  const before = heapAfterGc(gc)
  const worker = new Worker(new URL(import.meta.url), { workerData: { url } })
  await new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  const after = heapAfterGc(gc)
  worker.postMessage('stop')
  await new Promise((resolve) => worker.once('exit', resolve))
  return (after - before) / SOCKETS
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const file = fileURLToPath(import.meta.url)
const gc = (globalThis as { gc?: () => void }).gc
if (!isMainThread) {
  await clients((workerData as { url: string }).url)
} else if (process.argv[2] === '--server') {
  console.log(JSON.stringify(await measure(SERVERS[process.argv[3]!]!, gc!)))
  process.exit(0)
} else {
  const results: Record<string, number[]> = Object.fromEntries(Object.keys(SERVERS).map((name) => [name, []]))
  for (let round = 0; round < ROUNDS; round++)
    for (const name of round % 2 === 0 ? Object.keys(SERVERS) : Object.keys(SERVERS).reverse()) {
      const out = execFileSync(process.execPath, ['--expose-gc', file, '--server', name], { encoding: 'utf8' })
      results[name]!.push(Number(out.trim().split('\n').pop()))
    }
  for (const [name, values] of Object.entries(results))
    console.log(
      `${name}: ${(median(values) / 1024).toFixed(1)} KB of server heap per idle socket (median of ${ROUNDS}, ` +
        `${SOCKETS} sockets; rounds: ${values.map((value) => (value / 1024).toFixed(1)).join(', ')} KB)`
    )
  console.log(`plumage / Feathers: ${(median(results.plumage!) / median(results['Feathers v5']!)).toFixed(2)}×`)
}
