/**
 * `npm run bench:scale`: one instance with many authenticated sockets (issue 25). Each server runs in
 * its own process (bench/support/scale-server.ts, forked with --expose-gc): plumage as `npm start`
 * serves it on memory, the Feathers v5 reference app, and a bare socket.io server (fan-out's physical
 * limit). The sockets live in CLIENT_PROCESSES child processes (this file with `--clients`), each
 * socket.io-client over websocket, logging in with a JWT (`create authentication`, strategy jwt: no
 * bcrypt per socket); their CPU is reported apart from the server's. Everything on 127.0.0.1.
 *
 * At SOCKETS (default 10,000), for plumage and Feathers:
 * - connect: every socket connected and logged in (CONNECT_CONCURRENCY handshakes in flight per
 *   client process); memory per socket = the server's heap after a full GC (and its RSS) before and after.
 * - steady: 2,000 of the sockets join the channel 'busy' (the `rooms` service); one more socket creates
 *   `ticks` at 50/s for STEADY_SECONDS, published to 'busy'; latency = receive − the `t` in the record
 *   (performance.timeOrigin + performance.now(), comparable across processes); every (socket, write) counted.
 * - broadcast: BROADCASTS times one `ticks` record created on the server goes to every socket
 *   ('authenticated'); time to last delivery = the last socket's receive − `t` (and to the first); server CPU per
 *   delivered event over the phase (and its system part), against the bare socket.io server doing
 *   `io.to(room).emit` of the same payload, and the client processes' CPU over the phase per delivered event (their
 *   share of the cores decides the rest); how far apart the client processes got their last event (a write order
 *   that served one process's sockets last would show here) and how often the server was preempted.
 * - storm (plumage): every client process destroys all its TCP sockets at once (a network drop); the
 *   clients reconnect by themselves and resume with connection state recovery (`socket.recovered`: same
 *   login, no new authentication); the time until every socket is back, and the heap after vs before.
 * - records: `records` seeded with 10,000 then 100,000 records; find ({ k }, paginated) and create latency.
 * Growth: plumage also at 1,000 and 5,000 sockets (connect, memory, broadcast). A table goes to stdout and
 * bench/results/<date>-scale.md; the growth plot (written here, by hand) to the docs page that shows it,
 * docs/explanation/performance/scale-growth.svg, so that the docs build without bench/ (a blank app has none).
 * SOCKETS=1000 runs smaller (then only the counts ≤ SOCKETS); SCALE_GROWTH=false leaves the growth counts out,
 * SCALE_FULL=false the phases other than connect and broadcast. SCALE_SERVERS picks the servers (default
 * socketio,plumage,feathers; plumage must be one); `floor` is bare socket.io writing each event's frame straight to
 * every TCP socket (bench/support/scale-server.ts), the least a Node server can do per socket, logged only.
 * Stops by itself; every child is killed on exit.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { io as connectClient, type Socket } from 'socket.io-client'
import { replaceSection } from './support/report.js'
import { children, median, percentile, ScaleServer } from './support/scale-server-process.js'

const SOCKETS = Number(process.env.SOCKETS ?? 10_000)
const CLIENT_PROCESSES = Number(process.env.CLIENT_PROCESSES ?? 4)
const CONNECT_CONCURRENCY = 50
const BUSY = Math.min(2000, SOCKETS)
const WRITES_PER_SECOND = 50
/** The growth plot, beside the performance page that shows it. */
const PLOT = 'docs/explanation/performance/scale-growth.svg'
const WRITERS = 10
const STEADY_SECONDS = Number(process.env.STEADY_SECONDS ?? 10)
const BROADCASTS = Number(process.env.BROADCASTS ?? 10)
/** How long a phase may take; connecting every socket may take CONNECT_TIMEOUT_MS (the goal is 60 s). */
const PHASE_TIMEOUT_MS = 120_000
const CONNECT_TIMEOUT_MS = 300_000
const STORM_SETTLE_MS = 10_000
const QUIET_MS = 10_000
const STORMS = 2
const GROWTH = process.env.SCALE_GROWTH === 'false' ? [] : [1000, 5000].filter((count) => count < SOCKETS)
/** SCALE_FULL=false: at SOCKETS too only connect, memory and one event to all (quick A/B runs of fan-out). */
const FULL = process.env.SCALE_FULL !== 'false'
const here = dirname(fileURLToPath(import.meta.url))

const now = () => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Tick = { t: number; all?: boolean; seq?: number; id?: unknown }

/* ------------------------------------------------------------------ client processes */

/** A client process: `count` sockets, the first `busy` of them in 'busy'; answers the driver's messages. */
async function clientProcess(): Promise<void> {
  const sockets: Socket[] = []
  let url = ''
  let token = ''
  const steady: number[] = []
  let doubled = 0
  const drops = new Map<string, number>()
  const broadcasts = new Map<number, { count: number; first: number; last: number }>()
  let expectPerBroadcast = 0
  let back = 0
  let recovered = 0
  let stormStarted = false
  const send = (message: unknown) => process.send!(message)

  const login = (socket: Socket) =>
    new Promise<void>((resolve, reject) =>
      socket.emit('create', 'authentication', { strategy: 'jwt', accessToken: token }, {}, (error: unknown) =>
        error ? reject(new Error(`login failed: ${JSON.stringify(error)}`)) : resolve()
      )
    )

  const open = (busy: boolean) =>
    new Promise<Socket>((resolve, reject) => {
      const seen = new Set<number>()
      const socket = connectClient(url, { transports: ['websocket'], forceNew: true, reconnectionDelayMax: 2000 })
      // Why sockets dropped outside the storm (a client process starved of CPU misses its pings: 'ping timeout').
      socket.on('disconnect', (reason) => {
        if (!stormStarted) drops.set(reason, (drops.get(reason) ?? 0) + 1)
      })
      socket.on('ticks created', (data: Tick) => {
        const at = now()
        if (data.all) {
          const entry = broadcasts.get(data.t) ?? { count: 0, first: at, last: 0 }
          entry.count++
          entry.last = at
          broadcasts.set(data.t, entry)
          if (entry.count === expectPerBroadcast) send({ type: 'broadcast', t: data.t, first: entry.first, last: at })
        } else {
          steady.push(at - data.t)
          if (seen.has(data.seq!)) doubled++
          else seen.add(data.seq!)
        }
      })
      socket.once('connect', () => {
        login(socket)
          .then(() =>
            busy ? new Promise<void>((done) => socket.emit('create', 'rooms', {}, {}, () => done())) : undefined
          )
          .then(() => {
            // Later connects are reconnections (after the storm): resumed, or logged in again.
            socket.on('connect', () => {
              if (!stormStarted) return
              if (socket.recovered) {
                recovered++
                if (++back === sockets.length) send({ type: 'back', recovered, at: now() })
              } else
                void login(socket).then(() => {
                  if (++back === sockets.length) send({ type: 'back', recovered, at: now() })
                })
            })
            resolve(socket)
          }, reject)
      })
    })

  process.on('message', (message: Record<string, unknown>) => {
    const type = message.type
    if (type === 'connect') {
      url = message.url as string
      token = message.token as string
      const count = message.count as number
      const busy = message.busy as number
      expectPerBroadcast = count
      let next = 0
      const worker = async () => {
        while (next < count) {
          const index = next++
          sockets.push(await open(index < busy))
        }
      }
      void Promise.all(Array.from({ length: CONNECT_CONCURRENCY }, worker)).then(
        () => send({ type: 'connected', at: now() }),
        (error: Error) => send({ type: 'failed', error: error.message })
      )
    } else if (type === 'steady-count') send({ type: 'steady', received: steady.length - doubled })
    else if (type === 'steady') {
      send({ type: 'steady', latencies: steady, received: steady.length - doubled, doubled, drops: [...drops] })
    } else if (type === 'drop') {
      stormStarted = true
      back = 0
      recovered = 0
      for (const socket of sockets) {
        const engine = socket.io.engine as unknown as { transport?: { ws?: { _socket?: { destroy(): void } } } }
        engine.transport?.ws?._socket?.destroy()
      }
    } else if (type === 'cpu') send({ type: 'cpu', cpu: process.cpuUsage() })
    else if (type === 'close') {
      for (const socket of sockets) socket.disconnect()
      process.exit(0)
    }
  })
  send({ type: 'ready' })
}

/* ------------------------------------------------------------------ driver */

interface Stats {
  heapUsed: number
  rss: number
  cpu: { user: number; system: number }
}

class Clients {
  readonly processes: ChildProcess[] = []
  private readonly listeners = new Set<(message: Record<string, unknown>) => void>()

  async start(url: string, token: string, sockets: number, busy: number): Promise<number> {
    const started = now()
    for (let i = 0; i < CLIENT_PROCESSES; i++) {
      const child = fork(fileURLToPath(import.meta.url), ['--clients'], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc']
      })
      children.add(child)
      child.on('message', (message: Record<string, unknown>) => {
        for (const listener of [...this.listeners]) listener({ ...message, from: i })
      })
      this.processes.push(child)
    }
    await this.all('ready', () => undefined)
    const connected = this.all('connected', undefined, undefined, CONNECT_TIMEOUT_MS)
    this.processes.forEach((child, i) => {
      const count = Math.floor(sockets / CLIENT_PROCESSES) + (i < sockets % CLIENT_PROCESSES ? 1 : 0)
      const ownBusy = Math.floor(busy / CLIENT_PROCESSES) + (i < busy % CLIENT_PROCESSES ? 1 : 0)
      child.send({ type: 'connect', url, token, count, busy: ownBusy })
    })
    await connected
    return now() - started
  }

  /** Resolves with one message of `type` from every process (rejects on `failed` or after the phase timeout). */
  all(
    type: string,
    send?: () => void,
    match: (message: Record<string, unknown>) => boolean = () => true,
    timeoutMs = PHASE_TIMEOUT_MS
  ) {
    return new Promise<Record<string, unknown>[]>((resolve, reject) => {
      const got: Record<string, unknown>[] = []
      const timer = setTimeout(() => {
        this.listeners.delete(listener)
        reject(new Error(`${type}: ${got.length} of ${this.processes.length} client processes within the timeout`))
      }, timeoutMs)
      const listener = (message: Record<string, unknown>) => {
        if (message.type === 'failed') {
          clearTimeout(timer)
          this.listeners.delete(listener)
          reject(new Error(String(message.error)))
        }
        if (message.type !== type || !match(message)) return
        got.push(message)
        if (got.length < this.processes.length) return
        clearTimeout(timer)
        this.listeners.delete(listener)
        resolve(got)
      }
      this.listeners.add(listener)
      send?.()
    })
  }

  tell(type: string): void {
    for (const child of this.processes) child.send({ type })
  }

  async cpuMs(): Promise<number> {
    const answers = await this.all('cpu', () => this.tell('cpu'))
    return answers.reduce((sum, { cpu }) => {
      const { user, system } = cpu as Stats['cpu']
      return sum + (user + system) / 1000
    }, 0)
  }

  stop(): void {
    for (const child of this.processes) {
      if (child.connected) child.send({ type: 'close' })
      setTimeout(() => child.kill('SIGKILL'), 2000).unref()
    }
  }
}

const cpuMs = (stats: Stats) => (stats.cpu.user + stats.cpu.system) / 1000

interface Storm {
  ms: number
  serverCpuMs: number
  recovered: number
  listenQueueOverflows: number
  heapBefore: number
  heapAfter: number
  heapSettled: number
}

interface Run {
  server: string
  sockets: number
  connectMs?: number
  heapPerSocket?: number
  rssPerSocket?: number
  clientCpuConnectMs?: number
  steadyP50?: number
  steadyP99?: number
  steadyLost?: number
  steadyDoubled?: number
  steadyFailedWrites?: number
  /** Sockets that dropped before the storm, by socket.io's reason. */
  steadyDrops?: string
  lastDeliveryMs?: number
  /** The first socket's receive − `t` (median): what the server took before its first write reached a client. */
  firstDeliveryMs?: number
  cpuPerDeliveryUs?: number
  /** Its system (kernel) part: mostly the write per socket, on loopback the receiving side's TCP work too. */
  systemCpuPerDeliveryUs?: number
  /** When the server had written the event to every socket (median). */
  serverDoneMs?: number
  /** How much later the last client process got its last socket's event than the first one (median). */
  clientSpreadMs?: number
  /** The server's involuntary context switches (preempted by a woken client) per 1,000 delivered events. */
  preemptionsPerThousand?: number
  /** The client processes' CPU over the same phase, per delivered event (all of them together). */
  clientCpuPerDeliveryUs?: number
  /** The reconnect storms, one after the other (a second one shows whether memory grows with each). */
  storms?: Storm[]
  connectListenOverflows?: number
  /** The phase that did not finish, when one did not. */
  failed?: string
  records?: { count: number; findP50: number; findP99: number; createP50: number; createP99: number }[]
}

function connectWriter(url: string): Promise<Socket> {
  const socket = connectClient(url, { transports: ['websocket'], forceNew: true, reconnection: false })
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket))
    socket.once('connect_error', reject)
  })
}

const call = (socket: Socket, method: string, path: string, ...args: unknown[]) =>
  new Promise<unknown>((resolve, reject) =>
    socket.emit(method, path, ...args, (error: unknown, result: unknown) =>
      error ? reject(new Error(JSON.stringify(error))) : resolve(result)
    )
  )

/** The writes go over WRITERS sockets in turn, so a slow server does not hit one socket's limit of calls in flight. */
async function steadyPhase(clients: Clients, url: string, run: Run): Promise<void> {
  const writers = await Promise.all(Array.from({ length: WRITERS }, () => connectWriter(url)))
  const writes = WRITES_PER_SECOND * STEADY_SECONDS
  let failed = 0
  const answered: Promise<unknown>[] = []
  const started = now()
  for (let seq = 0; seq < writes; seq++) {
    const due = started + (seq * 1000) / WRITES_PER_SECOND
    if (due > now()) await sleep(due - now())
    answered.push(call(writers[seq % WRITERS]!, 'create', 'ticks', { t: now(), seq }).catch(() => failed++))
  }
  // Every write answered (its event is published before the answer), then counts that stop growing for QUIET_MS:
  // what has not arrived then is lost (a client process starved of CPU for seconds must not count as a loss).
  await Promise.race([Promise.all(answered), sleep(PHASE_TIMEOUT_MS)])
  let received = -1
  for (let quiet = 0; quiet < QUIET_MS / 500 && received < writes * BUSY;) {
    await sleep(500)
    const counts = await clients.all('steady', () => clients.tell('steady-count'))
    const total = counts.reduce((sum, answer) => sum + (answer.received as number), 0)
    quiet = total === received ? quiet + 1 : 0
    received = total
  }
  const answers = await clients.all('steady', () => clients.tell('steady'))
  const latencies = answers.flatMap((answer) => answer.latencies as number[])
  run.steadyP50 = median(latencies)
  run.steadyP99 = percentile(latencies, 0.99)
  run.steadyLost = writes * BUSY - answers.reduce((sum, answer) => sum + (answer.received as number), 0)
  run.steadyDoubled = answers.reduce((sum, answer) => sum + (answer.doubled as number), 0)
  run.steadyFailedWrites = failed
  const drops = new Map<string, number>()
  for (const answer of answers)
    for (const [reason, count] of answer.drops as [string, number][])
      drops.set(reason, (drops.get(reason) ?? 0) + count)
  run.steadyDrops = [...drops].map(([reason, count]) => `${count} ${reason}`).join(', ') || 'none'
  for (const writer of writers) writer.disconnect()
}

/** A process's involuntary context switches so far (Linux; NaN elsewhere). */
function preemptions(pid: number | undefined): number {
  try {
    return Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^nonvoluntary_ctxt_switches:\s+(\d+)/m)![1])
  } catch {
    return NaN
  }
}

async function broadcastPhase(server: ScaleServer, clients: Clients, run: Run): Promise<void> {
  const times: number[] = []
  const firsts: number[] = []
  const spreads: number[] = []
  /** When the server answered the broadcast: its loop over the sockets was over (and an IPC message each way). */
  const written: number[] = []
  const preemptedBefore = preemptions(server.child.pid)
  const clientsBefore = await clients.cpuMs()
  const before = await server.ask<Stats>('cpu')
  for (let i = 0; i < BROADCASTS; i++) {
    const t = now()
    const delivered = clients.all('broadcast', undefined, (message) => message.t === t)
    await server.ask('broadcast', { t })
    written.push(now() - t)
    const answers = await delivered
    const lasts = answers.map((answer) => answer.last as number)
    times.push(Math.max(...lasts) - t)
    spreads.push(Math.max(...lasts) - Math.min(...lasts))
    firsts.push(Math.min(...answers.map((answer) => answer.first as number)) - t)
  }
  const after = await server.ask<Stats>('cpu')
  const clientsAfter = await clients.cpuMs()
  run.lastDeliveryMs = median(times)
  run.firstDeliveryMs = median(firsts)
  const deliveries = BROADCASTS * run.sockets
  run.cpuPerDeliveryUs = ((cpuMs(after) - cpuMs(before)) * 1000) / deliveries
  run.systemCpuPerDeliveryUs = (after.cpu.system - before.cpu.system) / deliveries
  run.clientSpreadMs = median(spreads)
  run.serverDoneMs = median(written)
  run.preemptionsPerThousand = ((preemptions(server.child.pid) - preemptedBefore) * 1000) / deliveries
  run.clientCpuPerDeliveryUs = ((clientsAfter - clientsBefore) * 1000) / (BROADCASTS * run.sockets)
}

async function stormPhase(server: ScaleServer, clients: Clients): Promise<Storm> {
  const heapBefore = (await server.ask<Stats>('stats')).heapUsed
  const overflowsBefore = listenOverflows()
  const cpuBefore = cpuMs(await server.ask<Stats>('cpu'))
  const started = now()
  const answers = await clients.all('back', () => clients.tell('drop'))
  const ms = Math.max(...answers.map((answer) => answer.at as number)) - started
  const serverCpuMs = cpuMs(await server.ask<Stats>('cpu')) - cpuBefore
  const recovered = answers.reduce((sum, answer) => sum + (answer.recovered as number), 0)
  const listenQueueOverflows = listenOverflows() - overflowsBefore
  await sleep(1000)
  const heapAfter = (await server.ask<Stats>('stats')).heapUsed
  await sleep(STORM_SETTLE_MS)
  const heapSettled = (await server.ask<Stats>('stats')).heapUsed
  return { ms, serverCpuMs, recovered, listenQueueOverflows, heapBefore, heapAfter, heapSettled }
}

/**
 * Connections the kernel refused because the server's listen queue was full (TcpExt ListenOverflows, for the
 * whole machine): each costs its client a SYN retransmission, 1 s and more later.
 */
function listenOverflows(): number {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n')
    const header = lines.findIndex((line) => line.startsWith('TcpExt:'))
    const names = lines[header]!.split(' ')
    return Number(lines[header + 1]!.split(' ')[names.indexOf('ListenOverflows')])
  } catch {
    return NaN
  }
}

async function recordsPhase(server: ScaleServer, writer: Socket, run: Run): Promise<void> {
  run.records = []
  let seeded = 0
  for (const count of [10_000, 100_000]) {
    await server.ask('records', { n: count - seeded })
    seeded = count
    const finds: number[] = []
    const creates: number[] = []
    for (let i = 0; i < 200; i++) {
      let start = now()
      await call(writer, 'find', 'records', { k: i % 1000 })
      finds.push(now() - start)
      start = now()
      await call(writer, 'create', 'records', { text: 'one more', k: 1000 + i }, {})
      creates.push(now() - start)
    }
    seeded += 200
    run.records.push({
      count,
      findP50: median(finds),
      findP99: percentile(finds, 0.99),
      createP50: median(creates),
      createP99: percentile(creates, 0.99)
    })
  }
}

/** One server at `sockets`: the phases `full` asks for (all of them at the largest count). */
async function measure(kind: string, sockets: number, full: boolean): Promise<{ run: Run; clientCpuMs: number }> {
  const server = new ScaleServer(here, kind)
  const clients = new Clients()
  const run: Run = { server: kind, sockets }
  const log = (text: string) => console.log(`${kind} ${sockets}: ${text}`)
  let clientCpuMs = NaN
  try {
    const { url, token } = await server.started
    const before = await server.ask<Stats>('stats')
    const overflowsBefore = listenOverflows()
    const bare = kind === 'socketio' || kind === 'floor'
    run.connectMs = await clients.start(url, token, sockets, bare || !full ? 0 : BUSY)
    run.connectListenOverflows = listenOverflows() - overflowsBefore
    run.clientCpuConnectMs = await clients.cpuMs()
    await sleep(1000)
    const after = await server.ask<Stats>('stats')
    run.heapPerSocket = (after.heapUsed - before.heapUsed) / sockets
    run.rssPerSocket = (after.rss - before.rss) / sockets
    log(`connected in ${(run.connectMs / 1000).toFixed(1)} s`)
    if (full && !bare) {
      await steadyPhase(clients, url, run)
      log(`steady p99 ${run.steadyP99?.toFixed(1)} ms, lost ${run.steadyLost}`)
    }
    await broadcastPhase(server, clients, run)
    log(
      `last delivery ${run.lastDeliveryMs?.toFixed(1)} ms (first ${run.firstDeliveryMs?.toFixed(1)} ms), CPU per ` +
        `delivered event: server ${run.cpuPerDeliveryUs?.toFixed(2)} µs (system ${run.systemCpuPerDeliveryUs?.toFixed(2)}), ` +
        `clients ${run.clientCpuPerDeliveryUs?.toFixed(2)} µs; server answered after ${run.serverDoneMs?.toFixed(1)} ms; client processes' last deliveries ` +
        `${run.clientSpreadMs?.toFixed(1)} ms apart; server preempted ${run.preemptionsPerThousand?.toFixed(0)} times per 1,000`
    )
    if (full && kind === 'plumage') {
      run.storms = []
      for (let storm = 0; storm < STORMS; storm++) {
        run.storms.push(await stormPhase(server, clients))
        log(`storm over in ${run.storms.at(-1)!.ms.toFixed(0)} ms`)
      }
    }
    clientCpuMs = await clients.cpuMs()
    if (full && !bare) {
      const writer = await connectWriter(url)
      await recordsPhase(server, writer, run)
      writer.disconnect()
    }
  } catch (error) {
    // A phase that did not finish (e.g. not all sockets connected in time) ends this server's run, not the bench.
    run.failed = (error as Error).message
    log(`FAILED: ${run.failed}`)
  } finally {
    clients.stop()
    await server.stop()
  }
  return { run, clientCpuMs }
}

/* ------------------------------------------------------------------ report */

const kb = (bytes: number | undefined) => (bytes === undefined ? '—' : `${(bytes / 1024).toFixed(1)} KB`)
const us = (value: number | undefined) => (value === undefined ? '—' : `${value.toFixed(2)} µs`)
const mb = (bytes: number | undefined) => (bytes === undefined ? '—' : `${(bytes / 2 ** 20).toFixed(1)} MB`)
const ms = (value: number | undefined) => (value === undefined ? '—' : `${value.toFixed(1)} ms`)
const times = (ours: number | undefined, theirs: number | undefined) =>
  ours === undefined || !theirs ? '—' : `${(ours / theirs).toFixed(2)}×`

/** A plain SVG line chart per measure (x: sockets), one polyline per server; no library. */
function growthSvg(runs: Run[]): string {
  const charts: { title: string; value: (run: Run) => number | undefined; unit: string }[] = [
    { title: 'server heap per socket', value: (run) => run.heapPerSocket && run.heapPerSocket / 1024, unit: 'KB' },
    { title: 'connect + login, all sockets', value: (run) => run.connectMs && run.connectMs / 1000, unit: 's' },
    { title: 'one event to all: last delivery', value: (run) => run.lastDeliveryMs, unit: 'ms' },
    { title: 'server CPU per delivered event', value: (run) => run.cpuPerDeliveryUs, unit: 'µs' }
  ]
  const colors: Record<string, string> = { plumage: '#1f77b4', feathers: '#d62728', socketio: '#2ca02c' }
  const width = 360
  const height = 240
  const pad = 48
  const maxX = Math.max(...runs.map((run) => run.sockets))
  const parts: string[] = []
  charts.forEach((chart, index) => {
    const ox = (index % 2) * (width + 20)
    const oy = Math.floor(index / 2) * (height + 20)
    const values = runs.map(chart.value).filter((value): value is number => value !== undefined)
    const maxY = Math.max(...values, 0) * 1.1 || 1
    const x = (sockets: number) => ox + pad + ((width - pad - 30) * sockets) / maxX
    const y = (value: number) => oy + height - pad + 10 - ((height - pad - 20) * value) / maxY
    parts.push(`<g font-family="sans-serif" font-size="11">`)
    parts.push(`<text x="${ox + width / 2}" y="${oy + 16}" text-anchor="middle" font-size="13">${chart.title}</text>`)
    parts.push(`<line x1="${x(0)}" y1="${y(0)}" x2="${x(maxX)}" y2="${y(0)}" stroke="#333"/>`)
    parts.push(`<line x1="${x(0)}" y1="${y(0)}" x2="${x(0)}" y2="${y(maxY)}" stroke="#333"/>`)
    for (const tick of [0, maxY / 2, maxY / 1.1])
      parts.push(
        `<text x="${x(0) - 4}" y="${y(tick) + 4}" text-anchor="end">${tick.toFixed(tick < 10 ? 1 : 0)} ${chart.unit}</text>`
      )
    for (const sockets of [...new Set(runs.map((run) => run.sockets))])
      parts.push(`<text x="${x(sockets)}" y="${y(0) + 16}" text-anchor="middle">${sockets}</text>`)
    parts.push(`<text x="${ox + width / 2}" y="${oy + height}" text-anchor="middle">sockets</text>`)
    for (const server of Object.keys(colors)) {
      const points = runs
        .filter((run) => run.server === server && chart.value(run) !== undefined)
        .sort((a, b) => a.sockets - b.sockets)
        .map((run) => `${x(run.sockets).toFixed(1)},${y(chart.value(run)!).toFixed(1)}`)
      if (points.length === 0) continue
      parts.push(`<polyline fill="none" stroke="${colors[server]}" stroke-width="2" points="${points.join(' ')}"/>`)
      for (const point of points) {
        const [cx, cy] = point.split(',')
        parts.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${colors[server]}"/>`)
      }
    }
    parts.push('</g>')
  })
  const legend = Object.entries(colors)
    .map(
      ([server, color], i) =>
        `<text x="${10 + i * 120}" y="${2 * (height + 20) + 14}" fill="${color}" font-family="sans-serif" font-size="13">■ ${server}</text>`
    )
    .join('')
  const total = { width: 2 * width + 20, height: 2 * (height + 20) + 24 }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${total.width}" height="${total.height}" ` +
    `viewBox="0 0 ${total.width} ${total.height}"><rect width="100%" height="100%" fill="white"/>` +
    `${parts.join('')}${legend}</svg>\n`
  )
}

function report(runs: Run[], clientCpu: Record<string, number>, loads: string[]): string {
  const at = (server: string) => runs.find((run) => run.server === server && run.sockets === SOCKETS)
  const ours = at('plumage')!
  const feathers = at('feathers')
  const bare = at('socketio')
  const lines = [
    `## ${SOCKETS.toLocaleString('en-US')} authenticated sockets on one instance (${CLIENT_PROCESSES} client processes)`,
    '',
    '| | plumage | Feathers v5 | bare socket.io | plumage / Feathers | goal |',
    '|---|---|---|---|---|---|',
    `| connect + log in, all sockets | ${ms(ours.connectMs)} | ${ms(feathers?.connectMs)} | ${ms(bare?.connectMs)} | ${times(ours.connectMs, feathers?.connectMs)} | ≤ 60 s |`,
    `| server heap per socket | ${kb(ours.heapPerSocket)} | ${kb(feathers?.heapPerSocket)} | ${kb(bare?.heapPerSocket)} | ${times(ours.heapPerSocket, feathers?.heapPerSocket)} | ≤ 0.8× |`,
    `| server RSS per socket | ${kb(ours.rssPerSocket)} | ${kb(feathers?.rssPerSocket)} | ${kb(bare?.rssPerSocket)} | ${times(ours.rssPerSocket, feathers?.rssPerSocket)} | |`,
    `| ${WRITES_PER_SECOND} writes/s to ${BUSY} sockets: p50 | ${ms(ours.steadyP50)} | ${ms(feathers?.steadyP50)} | | ${times(ours.steadyP50, feathers?.steadyP50)} | |`,
    `| ${WRITES_PER_SECOND} writes/s to ${BUSY} sockets: p99 | ${ms(ours.steadyP99)} | ${ms(feathers?.steadyP99)} | | ${times(ours.steadyP99, feathers?.steadyP99)} | ≤ 0.5× |`,
    `| … lost / doubled deliveries (failed writes) | ${ours.steadyLost} / ${ours.steadyDoubled} (${ours.steadyFailedWrites}) | ${feathers?.steadyLost ?? '—'} / ${feathers?.steadyDoubled ?? '—'} (${feathers?.steadyFailedWrites ?? '—'}) | | | 0 |`,
    `| … sockets dropped (reason) | ${ours.steadyDrops ?? '—'} | ${feathers?.steadyDrops ?? '—'} | | | none |`,
    `| one event to all: last delivery (median of ${BROADCASTS}) | ${ms(ours.lastDeliveryMs)} | ${ms(feathers?.lastDeliveryMs)} | ${ms(bare?.lastDeliveryMs)} | ${times(ours.lastDeliveryMs, feathers?.lastDeliveryMs)} | ≤ 0.5× |`,
    `| … first delivery (median) | ${ms(ours.firstDeliveryMs)} | ${ms(feathers?.firstDeliveryMs)} | ${ms(bare?.firstDeliveryMs)} | | |`,
    `| … first to last client process done (median) | ${ms(ours.clientSpreadMs)} | ${ms(feathers?.clientSpreadMs)} | ${ms(bare?.clientSpreadMs)} | | |`,
    `| server CPU per delivered event | ${us(ours.cpuPerDeliveryUs)} | ${us(feathers?.cpuPerDeliveryUs)} | ${us(bare?.cpuPerDeliveryUs)} | plumage / bare: ${times(ours.cpuPerDeliveryUs, bare?.cpuPerDeliveryUs)} | ≤ 1.3× bare |`,
    `| … of which system (the kernel: a write per socket) | ${us(ours.systemCpuPerDeliveryUs)} | ${us(feathers?.systemCpuPerDeliveryUs)} | ${us(bare?.systemCpuPerDeliveryUs)} | | |`,
    `| … the client processes' CPU, per delivered event | ${us(ours.clientCpuPerDeliveryUs)} | ${us(feathers?.clientCpuPerDeliveryUs)} | ${us(bare?.clientCpuPerDeliveryUs)} | | |`,
    `| client processes' CPU, whole run | ${(clientCpu.plumage! / 1000).toFixed(1)} s | ${((clientCpu.feathers ?? NaN) / 1000).toFixed(1)} s | ${((clientCpu.socketio ?? NaN) / 1000).toFixed(1)} s | | |`,
    ...(ours.storms ?? []).flatMap((storm, i) => [
      `| reconnect storm ${i + 1}: all back, authenticated | ${ms(storm.ms)} (${storm.recovered} recovered; server CPU ${ms(storm.serverCpuMs)}; ${storm.listenQueueOverflows} listen-queue overflows) | | | | ≤ 10 s |`,
      `| … heap before / 1 s after / ${STORM_SETTLE_MS / 1000 + 1} s after | ${mb(storm.heapBefore)} / ${mb(storm.heapAfter)} / ${mb(storm.heapSettled)} | | | | back to before |`
    ]),
    `| listen-queue overflows while connecting | ${ours.connectListenOverflows} | ${feathers?.connectListenOverflows ?? '—'} | ${bare?.connectListenOverflows ?? '—'} | | |`,
    '',
    '| records (memory) | plumage find p50 / p99 | plumage create p50 / p99 | Feathers find p50 / p99 | Feathers create p50 / p99 |',
    '|---|---|---|---|---|',
    ...(ours.records ?? []).map((row, i) => {
      const theirs = feathers?.records?.[i]
      return `| ${row.count.toLocaleString('en-US')} | ${ms(row.findP50)} / ${ms(row.findP99)} | ${ms(row.createP50)} / ${ms(row.createP99)} | ${ms(theirs?.findP50)} / ${ms(theirs?.findP99)} | ${ms(theirs?.createP50)} / ${ms(theirs?.createP99)} |`
    }),
    '',
    '| growth (plumage) | connect + log in | heap per socket | last delivery of one event to all | CPU per delivery |',
    '|---|---|---|---|---|',
    ...runs
      .filter((run) => run.server === 'plumage')
      .map(
        (run) =>
          `| ${run.sockets.toLocaleString('en-US')} sockets | ${ms(run.connectMs)} | ${kb(run.heapPerSocket)} | ${ms(run.lastDeliveryMs)} | ${us(run.cpuPerDeliveryUs)} |`
      ),
    '',
    ...runs
      .filter((run) => run.failed)
      .map((run) => `**${run.server} at ${run.sockets} sockets did not finish:** ${run.failed}`),
    `Load average (1/5/15 min) after each server's run: ${loads.join('; ')} (${availableParallelism()} cores).`
  ]
  return lines.join('\n')
}

if (process.argv[2] === '--clients') await clientProcess()
else {
  const runs: Run[] = []
  const clientCpu: Record<string, number> = {}
  const loads: string[] = []
  const load = () =>
    loadavg()
      .map((value) => value.toFixed(2))
      .join(' / ')
  console.log(`load before: ${load()}`)
  for (const count of GROWTH) {
    runs.push((await measure('plumage', count, false)).run)
    loads.push(`plumage ${count}: ${load()}`)
  }
  for (const kind of (process.env.SCALE_SERVERS ?? 'socketio,plumage,feathers').split(',')) {
    const { run, clientCpuMs } = await measure(kind, SOCKETS, FULL)
    runs.push(run)
    clientCpu[kind] = clientCpuMs
    loads.push(`${kind} ${SOCKETS}: ${load()}`)
  }
  const text = report(runs, clientCpu, loads)
  console.log(text)
  const dir = join(process.cwd(), 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const stamp = new Date().toISOString().replace(/:/g, '-').replace(/\..*/, 'Z')
  writeFileSync(join(dir, `${stamp}-scale.md`), `# npm run bench:scale — ${new Date().toISOString()}\n\n${text}\n`)
  writeFileSync(join(process.cwd(), PLOT), growthSvg(runs))
  const written = [`bench/results/${stamp}-scale.md`, PLOT]
  // Only a run at the full count with every server replaces the table in BENCHMARKS.md.
  if (SOCKETS === 10_000 && FULL && process.env.SCALE_SERVERS === undefined && replaceSection('scale-run', text))
    written.push('BENCHMARKS.md')
  console.log(`written: ${written.join(', ')}`)
  process.exit(0)
}
