/**
 * `npm run bench:slow-reader`: what a client that stops reading costs the others (issue 25). Each round
 * starts a fresh server process (bench/support/scale-server.ts, plumage as `npm start` serves it on memory,
 * SOCKET_MAX_BUFFERED_BYTES at its default unless set), CLIENTS ordinary sockets in CLIENT_PROCESSES child
 * processes (this file with `--clients`; socket.io-client over websocket, logged in with a JWT, in the
 * channel 'busy'), and a writer that creates RATE `ticks` a second for SECONDS, each 2–8 KB, published
 * to 'busy'. Latency = receive − the `t` in the record (performance.timeOrigin + performance.now());
 * every (socket, write) is counted, so lost and doubled are exact. Rounds alternate WITHOUT and WITH
 * SLOW_READERS extra sockets that log in, join 'busy' and then stop reading (their TCP socket paused:
 * the kernel buffers fill, then the server's), so machine load falls on both sides alike; ROUNDS pairs,
 * the median pair ratio of the others' p99 is reported (goal ≤ 1.2×). The server is polled every
 * POLL_MS for heap and RSS (their peaks) and its open TCP connections (one fewer: a slow reader was
 * dropped, at that time after the first write). At the end the slow readers read again and say whether
 * the server had closed them. Everything on 127.0.0.1; stops by itself; every child is killed on exit.
 *
 * The defaults (100 clients, 50 creates/s, 40 s) are what this shared 2-core machine sustains: at 200
 * clients and 100/s (100 MB/s of events) the client processes fell seconds behind, and every ordinary
 * socket then held more than the bound too. At 50/s the slow reader takes ~30 s to be dropped: the
 * kernel's socket buffers (client receive, server send, ~4 MB on loopback) fill before the bound counts.
 */
import { fork, type ChildProcess } from 'node:child_process'
import type { Socket as TcpSocket } from 'node:net'
import { loadavg } from 'node:os'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { io as connectClient, type Socket } from 'socket.io-client'
import { children, median, percentile, ScaleServer } from './support/scale-server-process.js'

const CLIENTS = Number(process.env.CLIENTS ?? 100)
const CLIENT_PROCESSES = Number(process.env.CLIENT_PROCESSES ?? 2)
const SLOW_READERS = Number(process.env.SLOW_READERS ?? 1)
const RATE = Number(process.env.RATE ?? 50)
const SECONDS = Number(process.env.SECONDS ?? 40)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const WRITERS = 10
const POLL_MS = 200
const QUIET_MS = 3000
const PHASE_TIMEOUT_MS = 120_000
const here = dirname(fileURLToPath(import.meta.url))

const now = () => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Tick = { t: number; seq: number }

const login = (socket: Socket, token: string) =>
  new Promise<void>((resolve, reject) =>
    socket.emit('create', 'authentication', { strategy: 'jwt', accessToken: token }, {}, (error: unknown) =>
      error ? reject(new Error(`login failed: ${JSON.stringify(error)}`)) : resolve()
    )
  )

/** A socket logged in and in 'busy' (the `rooms` service of scale-server.ts puts the caller there). */
async function openBusy(url: string, token: string, onTick?: (tick: Tick) => void): Promise<Socket> {
  const socket = connectClient(url, { transports: ['websocket'], forceNew: true, reconnection: false })
  if (onTick) socket.on('ticks created', onTick)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', reject)
  })
  await login(socket, token)
  await new Promise<void>((resolve) => socket.emit('create', 'rooms', {}, {}, () => resolve()))
  return socket
}

/* ------------------------------------------------------------------ client processes */

async function clientProcess(): Promise<void> {
  const sockets: Socket[] = []
  const latencies: number[] = []
  let received = 0
  let doubled = 0
  const drops = new Map<string, number>()
  const send = (message: unknown) => process.send!(message)
  process.on('message', (message: Record<string, unknown>) => {
    if (message.type === 'connect') {
      const count = message.count as number
      const opening: Promise<Socket>[] = []
      for (let i = 0; i < count; i++) {
        const seen = new Set<number>()
        opening.push(
          openBusy(message.url as string, message.token as string, (tick) => {
            latencies.push(now() - tick.t)
            if (seen.has(tick.seq)) doubled++
            else {
              seen.add(tick.seq)
              received++
            }
          })
        )
      }
      void Promise.all(opening).then(
        (opened) => {
          for (const socket of opened) {
            socket.on('disconnect', (reason) => drops.set(reason, (drops.get(reason) ?? 0) + 1))
            sockets.push(socket)
          }
          send({ type: 'connected' })
        },
        (error: Error) => send({ type: 'failed', error: error.message })
      )
    } else if (message.type === 'count') send({ type: 'count', received })
    else if (message.type === 'results') send({ type: 'results', latencies, received, doubled, drops: [...drops] })
    else if (message.type === 'close') {
      for (const socket of sockets) socket.disconnect()
      process.exit(0)
    }
  })
  send({ type: 'ready' })
}

/* ------------------------------------------------------------------ driver */

/** A child that answers messages by type: `ask` sends one and resolves with the next answer of `answer`. */
class Child {
  private readonly waiting = new Map<string, ((message: Record<string, unknown>) => void)[]>()
  constructor(readonly child: ChildProcess) {
    children.add(child)
    child.on('message', (message: Record<string, unknown>) => {
      if (message.type === 'failed') throw new Error(`client process: ${String(message.error)}`)
      this.waiting.get(message.type as string)?.shift()?.(message)
    })
  }
  next(type: string): Promise<Record<string, unknown>> {
    return new Promise((resolve) => this.waiting.set(type, [...(this.waiting.get(type) ?? []), resolve]))
  }
  ask(message: Record<string, unknown>, answer = message.type as string): Promise<Record<string, unknown>> {
    const next = this.next(answer)
    this.child.send(message)
    return next
  }
}

interface Round {
  slow: number
  p50: number
  p99: number
  lost: number
  doubled: number
  drops: string
  peakRss: number
  peakHeap: number
  /** Seconds after the first write when the server had one connection fewer, per slow reader dropped. */
  droppedAt: number[]
  /** How each slow reader found its connection when it read again. */
  slowEnd: string[]
}

/** The TCP socket under a socket.io client's websocket (engine.io-client's ws transport). */
function tcpOf(socket: Socket): TcpSocket {
  return (socket.io.engine.transport as unknown as { ws: { _socket: TcpSocket } }).ws._socket
}

const call = (socket: Socket, ...args: unknown[]) =>
  new Promise<void>((resolve, reject) =>
    socket.emit('create', 'ticks', ...args, (error: unknown) =>
      error ? reject(new Error(JSON.stringify(error))) : resolve()
    )
  )

async function round(slow: number): Promise<Round> {
  const server = new ScaleServer(here, 'plumage')
  const { url, token } = await server.started
  const clients = Array.from(
    { length: CLIENT_PROCESSES },
    () =>
      new Child(fork(fileURLToPath(import.meta.url), ['--clients'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
  )
  await Promise.all(clients.map((client) => client.next('ready')))
  await Promise.all(
    clients.map((client, i) =>
      client.ask(
        {
          type: 'connect',
          url,
          token,
          count: Math.floor(CLIENTS / CLIENT_PROCESSES) + (i < CLIENTS % CLIENT_PROCESSES ? 1 : 0)
        },
        'connected'
      )
    )
  )
  const slowReaders = await Promise.all(Array.from({ length: slow }, () => openBusy(url, token)))
  const slowEnds = slowReaders.map(
    (socket) => new Promise<string>((resolve) => socket.once('disconnect', (reason) => resolve(reason)))
  )
  for (const socket of slowReaders) tcpOf(socket).pause()
  const writers = await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      const socket = connectClient(url, { transports: ['websocket'], forceNew: true, reconnection: false })
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve)
        socket.once('connect_error', reject)
      })
      return socket
    })
  )

  let peakRss = 0
  let peakHeap = 0
  let connections = (await server.ask<{ connections: number }>('memory')).connections
  const droppedAt: number[] = []
  const started = now()
  let polling = true
  const poll = (async () => {
    while (polling) {
      const memory = await server.ask<{ heapUsed: number; rss: number; connections: number }>('memory')
      peakRss = Math.max(peakRss, memory.rss)
      peakHeap = Math.max(peakHeap, memory.heapUsed)
      for (; connections > memory.connections; connections--) droppedAt.push((now() - started) / 1000)
      await sleep(POLL_MS)
    }
  })()

  const writes = RATE * SECONDS
  const answered: Promise<void>[] = []
  for (let seq = 0; seq < writes; seq++) {
    const due = started + (seq * 1000) / RATE
    if (due > now()) await sleep(due - now())
    const text = 'x'.repeat(2048 + ((seq * 2654435761) % 6145))
    answered.push(call(writers[seq % WRITERS]!, { t: now(), seq, text }))
  }
  await Promise.race([Promise.all(answered), sleep(PHASE_TIMEOUT_MS)])
  // Counts that stop growing for QUIET_MS: what has not arrived then is lost.
  let received = -1
  for (let quiet = 0; quiet < QUIET_MS / 500 && received < writes * CLIENTS;) {
    await sleep(500)
    const counts = await Promise.all(clients.map((client) => client.ask({ type: 'count' })))
    const total = counts.reduce((sum, answer) => sum + (answer.received as number), 0)
    quiet = total === received ? quiet + 1 : 0
    received = total
  }
  polling = false
  await poll
  const results = await Promise.all(clients.map((client) => client.ask({ type: 'results' })))
  for (const socket of slowReaders) tcpOf(socket).resume()
  const slowEnd = await Promise.all(slowEnds.map((end) => Promise.race([end, sleep(2000).then(() => 'still open')])))
  const latencies = results.flatMap((answer) => answer.latencies as number[])
  const drops = new Map<string, number>()
  for (const answer of results)
    for (const [reason, count] of answer.drops as [string, number][])
      drops.set(reason, (drops.get(reason) ?? 0) + count)
  for (const socket of [...writers, ...slowReaders]) socket.disconnect()
  for (const client of clients) client.child.send({ type: 'close' })
  await Promise.all(clients.map((client) => new Promise((resolve) => client.child.once('exit', resolve))))
  await server.stop()
  return {
    slow,
    p50: median(latencies),
    p99: percentile(latencies, 0.99),
    lost: writes * CLIENTS - results.reduce((sum, answer) => sum + (answer.received as number), 0),
    doubled: results.reduce((sum, answer) => sum + (answer.doubled as number), 0),
    drops: [...drops].map(([reason, count]) => `${count} ${reason}`).join(', ') || 'none',
    peakRss,
    peakHeap,
    droppedAt,
    slowEnd
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')

function describe(r: Round): string {
  const times = new Map<string, number>()
  for (const at of r.droppedAt) times.set(at.toFixed(1), (times.get(at.toFixed(1)) ?? 0) + 1)
  const drops = [...times].map(([at, count]) => (count === 1 ? `${at} s` : `${at} s (${count} sockets)`))
  const dropped =
    r.slow === 0
      ? ''
      : `; connections dropped at ${drops.join(', ') || 'none'}; slow readers found ${r.slowEnd.join(', ')}`
  return (
    `p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, lost ${r.lost}, doubled ${r.doubled}, ` +
    `other drops ${r.drops}, peak RSS ${mb(r.peakRss)}, peak heap ${mb(r.peakHeap)}${dropped}`
  )
}

if (process.argv[2] === '--clients') await clientProcess()
else {
  console.log(
    `${CLIENTS} clients in ${CLIENT_PROCESSES} processes, ${RATE} creates/s of 2–8 KB for ${SECONDS} s, ` +
      `${SLOW_READERS} slow reader(s), SOCKET_MAX_BUFFERED_BYTES=${process.env.SOCKET_MAX_BUFFERED_BYTES ?? 'default (4 MiB)'}`
  )
  const pairs: { without: Round; with: Round }[] = []
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which side goes first, so a trend in the machine's load does not favour one.
    const order = i % 2 === 0 ? [0, SLOW_READERS] : [SLOW_READERS, 0]
    const pair: Partial<Record<'without' | 'with', Round>> = {}
    for (const slow of order) {
      const result = await round(slow)
      pair[slow === 0 ? 'without' : 'with'] = result
      console.log(`round ${i + 1} ${slow === 0 ? 'without' : 'with   '}: ${describe(result)} (load ${load()})`)
    }
    pairs.push(pair as { without: Round; with: Round })
  }
  const ratios = pairs.map((pair) => pair.with.p99 / pair.without.p99)
  const rssRatios = pairs.map((pair) => pair.with.peakRss / pair.without.peakRss)
  console.log(
    `others' p99 with / without a slow reader: ${median(ratios).toFixed(2)}× (median of ${ROUNDS} pairs: ` +
      `${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}; goal ≤ 1.2×)`
  )
  console.log(
    `p99 without ${median(pairs.map((pair) => pair.without.p99)).toFixed(1)} ms, with ` +
      `${median(pairs.map((pair) => pair.with.p99)).toFixed(1)} ms; peak RSS with / without ` +
      `${median(rssRatios).toFixed(2)}× (${rssRatios.map((ratio) => ratio.toFixed(2)).join(', ')}); load ${load()}`
  )
  process.exit(0)
}
