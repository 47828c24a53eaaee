/**
 * `npm run bench:live` (issue 39, Scale): BENCH_LIVE_QUERIES live queries (default 10,000) over BENCH_LIVE_SOCKETS
 * sockets (2,000) and BENCH_LIVE_SHAPES distinct queries (1,000: equality shapes `{ room }` and `{ room, kind }`, and
 * top-N windows `{ room, $sort, $limit }`, bench/support/live-workload.ts), then a steady BENCH_LIVE_WRITES writes/s
 * (100: creates, patches, removes) for BENCH_LIVE_SECONDS (20). Everything on 127.0.0.1.
 *
 * - plumage: the server as `npm start` builds it on memory, in its own process (bench/support/live-server.ts), with
 *   an open `items` service; the sockets in BENCH_LIVE_CLIENTS client processes (2) speaking the wire protocol's
 *   `watch` (bench/support/live-clients.ts).
 * - Feathers v5 + feathers-reactive: the Feathers reference app with the same service, every event to every socket,
 *   and in the clients @feathersjs/socketio-client + feathers-reactive matching the events against each query.
 * - The Horizon design (bench/support/horizon-live.ts): one RethinkDB `orderBy({ index }).limit(n).changes(…)` per
 *   subscriber, at BENCH_LIVE_HORIZON subscribers (1,000, 5,000, 10,000); needs RETHINKDB_URL (RETHINKDB_PID for its
 *   CPU) or RETHINKDB_BIN, else one loud skip line.
 *
 * Latency: each change a client's list takes, from the write that caused it (the `t` stamped in the record by the
 * writer; for removals, the writer's log of send times by id) to the client's receipt of the frame (or
 * feathers-reactive's new list), all on performance.timeOrigin + performance.now(). Server CPU: process.cpuUsage()
 * of the server process from the first write until the clients are quiet, per write; client CPU likewise. At the
 * end every client list is compared with a fresh `find` of its query (on a new socket of its client process).
 * Goal: plumage's p99 ≤ 50 ms. BENCH_LIVE_SIDES picks the sides (default plumage,feathers,horizon); LIVE_SERVER_ARGS
 * adds node options to the server process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/live`, profiled from start to end).
 * A run at the defaults replaces the section between the live-run markers in BENCHMARKS.md; every run writes
 * bench/results/<date>-live.md.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { io as connectClient, type Socket } from 'socket.io-client'
import { runHorizon, type HorizonRun } from './support/horizon-live.js'
import { LiveClientSet, type Verdicts } from './support/live-clients.js'
import {
  frameLatencies,
  ITEMS,
  LIVE_DEFAULTS,
  liveScale,
  quantile,
  WriteStream,
  type Frame,
  type LiveScale
} from './support/live-workload.js'
import { replaceSection } from './support/report.js'
import { children } from './support/scale-server-process.js'

const scale = liveScale()
const here = dirname(fileURLToPath(import.meta.url))
const WRITERS = 10
/** The clients are quiet once no frame arrived for QUIET_MS, or QUIET_LIMIT_MS after the last write was answered. */
const QUIET_MS = 2_000
const QUIET_LIMIT_MS = 60_000
const PHASE_TIMEOUT_MS = 180_000
const WRITE_TIMEOUT_MS = 60_000
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
type Cpu = { user: number; system: number }
const cpuMs = (cpu: Cpu) => (cpu.user + cpu.system) / 1000

/* ------------------------------------------------------------------ client process */

async function clientProcess(): Promise<void> {
  let set: LiveClientSet | undefined
  const send = (message: unknown) => process.send!(message)
  process.on('message', (message: Record<string, unknown>) => {
    const type = message.type
    if (type === 'open') {
      set = new LiveClientSet(message.kind as 'plumage' | 'feathers', message.url as string, scale)
      void set.open(message.sockets as number[]).then(
        () => send({ type: 'opened', watches: set!.watchCount }),
        (error: Error) => send({ type: 'failed', error: error.message })
      )
    } else if (type === 'count') send({ type: 'count', frames: set!.frames.length })
    else if (type === 'cpu') send({ type: 'cpu', cpu: process.cpuUsage() })
    else if (type === 'frames')
      send({
        type: 'frames',
        frames: set!.frames.map((frame) => [frame.at, frame.t, ...frame.removed]),
        unknown: set!.unknownFrames,
        drops: [...set!.drops]
      })
    else if (type === 'verify')
      void set!.verify().then(
        (verdicts) => send({ type: 'verify', verdicts }),
        (error: Error) => send({ type: 'failed', error: error.message })
      )
    else if (type === 'close') {
      set?.close()
      process.exit(0)
    }
  })
  send({ type: 'ready' })
}

/* ------------------------------------------------------------------ driver */

class Process {
  private nextId = 1
  private readonly waiting = new Map<number, (value: unknown) => void>()
  private readonly listeners = new Set<(message: Record<string, unknown>) => void>()

  /** A server's announcement (id 0). */
  readonly started: Promise<{ url: string }>

  constructor(readonly child: ChildProcess) {
    children.add(child)
    this.started = new Promise((resolve) => this.waiting.set(0, resolve as (value: unknown) => void))
    child.on('message', (message: Record<string, unknown>) => {
      if (typeof message.id === 'number') {
        this.waiting.get(message.id)?.(message.value)
        this.waiting.delete(message.id)
      }
      for (const listener of [...this.listeners]) listener(message)
    })
  }

  /** Server side: a request with an id. */
  ask<T>(type: string, fields: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++
    const answer = new Promise<T>((resolve) => this.waiting.set(id, resolve as (value: unknown) => void))
    this.child.send({ id, type, ...fields })
    return answer
  }

  /** Client side: the next message of `type` (rejects on `failed` or after the timeout). */
  next<T extends Record<string, unknown>>(type: string, message?: Record<string, unknown>): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener)
        reject(new Error(`${type}: no answer within ${PHASE_TIMEOUT_MS / 1000} s`))
      }, PHASE_TIMEOUT_MS)
      const listener = (got: Record<string, unknown>) => {
        if (got.type !== type && got.type !== 'failed') return
        clearTimeout(timer)
        this.listeners.delete(listener)
        if (got.type === 'failed') reject(new Error(String(got.error)))
        else resolve(got as T)
      }
      this.listeners.add(listener)
      if (message) this.child.send(message)
    })
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const exited = new Promise((resolve) => this.child.once('exit', resolve))
    if (this.child.connected) this.child.send({ type: 'close' })
    this.child.kill('SIGTERM')
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000)
    await exited
    clearTimeout(timer)
  }
}

type Stats = { cpu: Cpu; rss: number; heapUsed: number; views: { views: number; watches: number; records: number } }

export interface SideRun {
  side: 'plumage' | 'feathers'
  watches: number
  openMs?: number
  writes?: number
  failedWrites?: number
  /** The writer's call answered (p99): the server's own pace. */
  answerP99?: number
  frames?: number
  untraced?: number
  p50?: number
  p99?: number
  max?: number
  serverCpuPerWriteMs?: number
  serverCpuShare?: number
  clientCpuPerWriteMs?: number
  clientCpuShare?: number
  rssSeeded?: number
  rssWatching?: number
  rssEnd?: number
  views?: Stats['views']
  verdicts?: Verdicts
  quietAfterMs?: number
  /** Client sockets that dropped before the end, by socket.io's reason. */
  drops?: string
  failed?: string
}

function connectWriter(url: string): Promise<Socket> {
  const socket = connectClient(url, { transports: ['websocket'], forceNew: true, reconnection: false })
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket))
    socket.once('connect_error', reject)
  })
}

/** A write; it fails when the server does not answer within WRITE_TIMEOUT_MS (or its socket dropped). */
const call = (socket: Socket, method: string, ...args: unknown[]) =>
  new Promise<unknown>((resolve, reject) =>
    socket
      .timeout(WRITE_TIMEOUT_MS)
      .emit(method, ITEMS, ...args, (timeout: unknown, error: unknown, result: unknown) =>
        timeout
          ? reject(
              new Error(
                `no answer within ${WRITE_TIMEOUT_MS / 1000} s (socket ${socket.connected ? 'connected' : 'dropped'})`
              )
            )
          : error
            ? reject(new Error(JSON.stringify(error)))
            : resolve(result)
      )
  )

/**
 * The steady writes at the scale's rate over WRITERS sockets (creates in turn, other writes by id); resolves once
 * every write was answered.
 */
async function steadyWrites(
  url: string,
  stream: WriteStream
): Promise<{ writes: number; failed: number; errors: string[]; answers: number[] }> {
  const writers = await Promise.all(Array.from({ length: WRITERS }, () => connectWriter(url)))
  const writes = Math.round(scale.writesPerSecond * scale.seconds)
  let failed = 0
  const errors = new Set<string>()
  const answers: number[] = []
  const answered: Promise<unknown>[] = []
  const started = now()
  for (let n = 0; n < writes; n++) {
    const due = started + (n * 1000) / scale.writesPerSecond
    if (due > now()) await sleep(due - now())
    const t = now()
    const write = stream.write(t)
    // The writes of one record go over one socket, in order: across sockets a server may take them in another order.
    const socket = writers[write.type === 'create' ? n % WRITERS : write.id % WRITERS]!
    const done =
      write.type === 'create'
        ? call(socket, 'create', write.data, {}).then((record) => stream.created((record as { id: number }).id, t))
        : write.type === 'patch'
          ? call(socket, 'patch', write.id, write.data, {})
          : call(socket, 'remove', write.id, {})
    answered.push(
      done.then(
        () => answers.push(now() - t),
        (error: Error) => {
          failed++
          errors.add(`${write.type}: ${error.message}`)
        }
      )
    )
  }
  await Promise.race([Promise.all(answered), sleep(PHASE_TIMEOUT_MS)])
  for (const writer of writers) writer.disconnect()
  return { writes, failed, errors: [...errors].slice(0, 3), answers }
}

/** Waits until no client process got a frame for QUIET_MS (at most QUIET_LIMIT_MS); answers how long it waited. */
async function quiet(clients: Process[]): Promise<number> {
  const started = now()
  let total = -1
  let still = now()
  while (now() - started < QUIET_LIMIT_MS) {
    await sleep(250)
    const counts = await Promise.all(
      clients.map((client) => client.next<{ frames: number }>('count', { type: 'count' }))
    )
    const sum = counts.reduce((all, count) => all + count.frames, 0)
    if (sum !== total) {
      total = sum
      still = now()
    } else if (now() - still >= QUIET_MS) break
  }
  return now() - started
}

async function clientCpuMs(clients: Process[]): Promise<number> {
  const answers = await Promise.all(clients.map((client) => client.next<{ cpu: Cpu }>('cpu', { type: 'cpu' })))
  return answers.reduce((sum, answer) => sum + cpuMs(answer.cpu), 0)
}

function forkClients(side: string, url: string): Promise<Process[]> {
  return Promise.all(
    Array.from({ length: scale.clientProcesses }, async (_, index) => {
      const client = new Process(
        fork(fileURLToPath(import.meta.url), ['--clients'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      )
      await client.next('ready')
      const sockets = Array.from({ length: scale.sockets }, (_, socket) => socket).filter(
        (socket) => socket % scale.clientProcesses === index
      )
      await client.next('opened', { type: 'open', kind: side, url, sockets })
      return client
    })
  )
}

async function runSide(side: 'plumage' | 'feathers'): Promise<SideRun> {
  const log = (text: string) => console.log(`${side}: ${text}`)
  const server = new Process(
    fork(join(here, 'support', 'live-server.mjs'), [], {
      execArgv: (process.env.LIVE_SERVER_ARGS ?? '').split(' ').filter(Boolean),
      env: {
        ...process.env,
        LIVE_SERVER: side,
        LIVE_SERVER_MAX_WATCHES: String(Math.ceil(scale.queries / scale.sockets)),
        NODE_ENV: 'production'
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
  )
  const clients: Process[] = []
  const run: SideRun = { side, watches: scale.queries }
  try {
    await measureSide(server, clients, run, log)
    log(
      `${run.writes} writes (${run.failedWrites} failed), ${run.frames} frames: p50 ${run.p50!.toFixed(1)} ms, p99 ` +
        `${run.p99!.toFixed(1)} ms; server CPU ${run.serverCpuPerWriteMs!.toFixed(2)} ms/write; lists: ` +
        `${run.verdicts!.equal} equal, ${run.verdicts!.order} order only, ${run.verdicts!.wrong} wrong`
    )
  } catch (error) {
    // What was measured before stays in the report.
    run.failed = (error as Error).message
    log(`FAILED: ${run.failed}`)
  } finally {
    await Promise.all(clients.map((client) => client.stop()))
    await server.stop()
  }
  return run
}

/** The phases of one side, filling `run` as they end (a phase that fails leaves the earlier figures). */
async function measureSide(
  server: Process,
  clients: Process[],
  run: SideRun,
  log: (text: string) => void
): Promise<void> {
  const { url } = await server.started
  const stream = new WriteStream(scale)
  const { ids } = await server.ask<{ ids: number[] }>('seed', { scale })
  for (const id of ids) stream.known(id)
  run.rssSeeded = (await server.ask<Stats>('stats')).rss
  const opening = now()
  clients.push(...(await forkClients(run.side, url)))
  run.openMs = now() - opening
  log(`${scale.queries} watches on ${scale.sockets} sockets in ${(run.openMs / 1000).toFixed(1)} s`)
  const watching = await server.ask<Stats>('stats')
  run.rssWatching = watching.rss
  if (watching.views) run.views = watching.views
  const clientsBefore = await clientCpuMs(clients)
  const started = now()
  const { writes, failed, errors, answers: writeAnswers } = await steadyWrites(url, stream)
  if (errors.length > 0) log(`failed writes, e.g. ${errors.join('; ')}`)
  Object.assign(run, { writes, failedWrites: failed, answerP99: quantile(writeAnswers, 0.99) })
  run.quietAfterMs = await quiet(clients)
  const elapsed = now() - started
  const end = await server.ask<Stats>('stats')
  const clientCpu = (await clientCpuMs(clients)) - clientsBefore
  const serverCpu = cpuMs(end.cpu) - cpuMs(watching.cpu)
  Object.assign(run, {
    rssEnd: end.rss,
    serverCpuPerWriteMs: serverCpu / writes,
    serverCpuShare: serverCpu / elapsed,
    clientCpuPerWriteMs: clientCpu / writes,
    clientCpuShare: clientCpu / elapsed
  })
  const answers = await Promise.all(
    clients.map((client) =>
      client.next<{ frames: number[][]; unknown: number; drops: [string, number][] }>('frames', { type: 'frames' })
    )
  )
  const frames: Frame[] = answers.flatMap((answer) =>
    answer.frames.map(([at, t, ...removed]) => ({ at: at!, t: t!, removed }))
  )
  const latencies = frameLatencies(frames, stream.writeTimes)
  const drops = new Map<string, number>()
  for (const answer of answers)
    for (const [reason, count] of answer.drops) drops.set(reason, (drops.get(reason) ?? 0) + count)
  Object.assign(run, {
    frames: frames.length,
    untraced: frames.length - latencies.length + answers.reduce((sum, answer) => sum + answer.unknown, 0),
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: quantile(latencies, 1),
    drops: [...drops].map(([reason, count]) => `${count} ${reason}`).join(', ') || 'none'
  })
  run.verdicts = (
    await Promise.all(clients.map((client) => client.next<{ verdicts: Verdicts }>('verify', { type: 'verify' })))
  ).reduce<Verdicts>(
    (sum, { verdicts }) => {
      for (const key of Object.keys(sum) as (keyof Verdicts)[]) sum[key] += verdicts[key]
      return sum
    },
    { equal: 0, order: 0, wrong: 0, wrongWindows: 0, short: 0 }
  )
}

/* ------------------------------------------------------------------ report */

const ms = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? '—' : `${value.toFixed(1)} ms`)
const mb = (bytes: number | undefined) => (bytes === undefined ? '—' : `${(bytes / 2 ** 20).toFixed(0)} MB`)
const share = (value: number | undefined) => (value === undefined ? '—' : `${(value * 100).toFixed(0)} %`)
const count = (value: number | undefined) => (value === undefined ? '—' : value.toLocaleString('en-US'))
const perWrite = (value: number | undefined, part: number | undefined) =>
  value === undefined ? '—' : `${value.toFixed(2)} ms (${share(part)})`

function sideRows(runs: SideRun[]): string[] {
  const at = (side: string) => runs.find((run) => run.side === side)
  const ours = at('plumage')
  const theirs = at('feathers')
  const cell = (run: SideRun | undefined, value: (run: SideRun) => string) => (run ? value(run) : 'not run')
  const row = (name: string, value: (run: SideRun) => string, goal = '') =>
    `| ${name} | ${cell(ours, value)} | ${cell(theirs, value)} | ${goal} |`
  const lists = ({ verdicts }: SideRun) =>
    !verdicts
      ? '—'
      : `${count(verdicts.equal)} equal, ${count(verdicts.order)} same records in another order, ` +
        `${count(verdicts.wrong)} wrong (${count(verdicts.wrongWindows)} of them $limit windows, ` +
        `${count(verdicts.short)} shorter than the find)`
  return [
    '| | plumage (server-side live queries) | Feathers v5 + feathers-reactive | goal |',
    '|---|---|---|---|',
    row('watches opened, first lists received', (run) => ms(run.openMs)),
    row('writes sent (failed)', (run) => `${count(run.writes)} (${run.failedWrites})`),
    row('write answered to the writer, p99', (run) => ms(run.answerP99)),
    row('changes received by the clients (untraced)', (run) => `${count(run.frames)} (${count(run.untraced)})`),
    row('write → client p50', (run) => ms(run.p50)),
    row('write → client p99', (run) => ms(run.p99), '≤ 50 ms (plumage)'),
    row('write → client max', (run) => ms(run.max)),
    row('server CPU per write (share of one core)', (run) => perWrite(run.serverCpuPerWriteMs, run.serverCpuShare)),
    row('client processes\u2019 CPU per write (share of one core)', (run) =>
      perWrite(run.clientCpuPerWriteMs, run.clientCpuShare)
    ),
    row(
      'server RSS: seeded / watching / end',
      (run) => `${mb(run.rssSeeded)} / ${mb(run.rssWatching)} / ${mb(run.rssEnd)}`
    ),
    row('views on the server (records held)', (run) =>
      run.views ? `${count(run.views.views)} (${count(run.views.records)})` : 'none (the clients match)'
    ),
    row('client lists vs a fresh find at the end', lists, '0 wrong'),
    row('clients quiet after the last write', (run) => ms(run.quietAfterMs)),
    row('client sockets dropped (reason)', (run) => run.drops ?? '—', 'none'),
    ...runs.filter((run) => run.failed).map((run) => `\n**${run.side} did not finish:** ${run.failed}`)
  ]
}

function horizonRows(runs: HorizonRun[] | string): string[] {
  if (typeof runs === 'string') return [`Horizon design (RethinkDB changefeeds): ${runs}`]
  return [
    '| Horizon design: subscribers (one `orderBy({index}).limit(n).changes()` each) | feeds opened in | write → subscriber p50 | p99 | RethinkDB CPU per write (share of one core) | RethinkDB RSS | changes (query form) |',
    '|---|---|---|---|---|---|---|',
    ...runs.map(
      (run) =>
        `| ${count(run.subscribers)} | ${ms(run.openMs)} | ${ms(run.p50)} | ${ms(run.p99)} | ` +
        `${run.cpuPerWriteMs === undefined ? '— (no PID)' : `${run.cpuPerWriteMs.toFixed(2)} ms (${share(run.cpuShare)})`} | ` +
        `${mb(run.rss)} | ${count(run.frames)} (${run.form})${run.failed ? ` — failed: ${run.failed}` : ''} |`
    )
  ]
}

function report(runs: SideRun[], horizon: HorizonRun[] | string, loads: string[], maxLoad: number): string {
  const noisy = maxLoad / availableParallelism() > 1
  const ours = runs.find((run) => run.side === 'plumage')
  const verdict =
    !ours || ours.p99 === undefined
      ? 'plumage did not finish'
      : ours.p99 <= 50
        ? `**met**: plumage's p99 is ${ms(ours.p99)} (≤ 50 ms)`
        : `**not met**: plumage's p99 is ${ms(ours.p99)} (goal ≤ 50 ms)`
  const list = cpus()
  return [
    `${count(scale.queries)} live queries over ${count(scale.sockets)} sockets and ${count(scale.shapes)} distinct ` +
      `queries (windows of ${scale.window}), ${scale.recordsPerRoom} records per room, ${scale.writesPerSecond} ` +
      `writes/s for ${scale.seconds} s, ${scale.clientProcesses} client processes. Goal (issue 39): write → client ` +
      `p99 ≤ 50 ms — ${verdict}.`,
    '',
    ...sideRows(runs),
    '',
    ...horizonRows(horizon),
    '',
    `Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC. Machine: ${availableParallelism()} × ` +
      `${list[0]?.model.trim() ?? 'unknown'}, Node ${process.version}. Load average (1/5/15 min): ${loads.join('; ')}.`,
    ...(noisy
      ? [
          '',
          `**Noisy run**: the 1-minute load average reached ${maxLoad.toFixed(1)} on ${availableParallelism()} cores ` +
            '(other processes wanted the CPU too): latencies include waiting for a core; compare sides of one run only.'
        ]
      : [])
  ].join('\n')
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ')

if (process.argv[2] === '--clients') await clientProcess()
else {
  const sides = (process.env.BENCH_LIVE_SIDES ?? 'plumage,feathers,horizon').split(',')
  const loads = [`start ${load()}`]
  let maxLoad = loadavg()[0]!
  const sample = setInterval(() => (maxLoad = Math.max(maxLoad, loadavg()[0]!)), 5_000)
  const runs: SideRun[] = []
  for (const side of ['plumage', 'feathers'] as const) {
    if (!sides.includes(side)) continue
    runs.push(await runSide(side))
    loads.push(`after ${side} ${load()}`)
  }
  let horizon: HorizonRun[] | string = 'not run (BENCH_LIVE_SIDES)'
  if (sides.includes('horizon')) {
    horizon = await runHorizon(scale)
    if (typeof horizon === 'string') console.log(horizon)
    loads.push(`after horizon ${load()}`)
  }
  clearInterval(sample)
  const text = report(runs, horizon, loads, maxLoad)
  console.log(`\n${text}`)
  const dir = join(process.cwd(), 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const stamp = new Date().toISOString().replace(/:/g, '-').replace(/\..*/, 'Z')
  writeFileSync(join(dir, `${stamp}-live.md`), `# npm run bench:live — ${new Date().toISOString()}\n\n${text}\n`)
  const written = [`bench/results/${stamp}-live.md`]
  const full = (Object.keys(LIVE_DEFAULTS) as (keyof LiveScale)[]).every((key) => scale[key] === LIVE_DEFAULTS[key])
  if (full && process.env.BENCH_LIVE_SIDES === undefined && replaceSection('live-run', text))
    written.push('BENCHMARKS.md')
  console.log(`written: ${written.join(', ')}`)
  process.exit(0)
}
