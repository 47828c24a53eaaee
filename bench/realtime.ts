/**
 * `npm run bench:realtime`: real-time events across app instances. 1, 2 and 4 instances of the built
 * plumage server (`node dist/plumage.mjs`, STORE=rethinkdb, one fresh database per instance count)
 * against what a Feathers user would run instead, the anchor: the Feathers v5 reference app
 * (bench/support/feathers-sync-server.ts) on @feathersjs/knex with PostgreSQL 15 (a cluster this run
 * makes in a temporary folder, fsync and synchronous_commit on: bench/support/postgres.ts), its
 * instances joined by feathers-sync over Redis (a redis-server this run starts). Beside them the same
 * Feathers app on memory services (no durable write: the ceiling) and bare single-record inserts on
 * the same RethinkDB (no events: the physical limit). Everything on free loopback ports, stopped by PID.
 * All sides in the same run, same clients, same load.
 *
 * Per side: CLIENTS socket.io clients (in RECEIVER_THREADS worker threads) log in (local strategy) on the instances in
 * turn (client i on instance i mod N); one more logged-in socket per instance sends the creates, in turn
 * over the instances. Every create carries `t` (performance.timeOrigin + performance.now(), comparable
 * across threads and processes), `from` (the instance it was sent to) and `p` (the phase).
 * - Load phase: CREATES creates, IN_FLIGHT in flight → events/s = first deliveries / (last first
 *   delivery − first create sent), i.e. until all clients had all events; latency under load.
 * - Paced phase: CREATES creates, one in flight → delivery latency without the receivers' backlog.
 * - Cross-instance latency: receive time − `t`, only for deliveries to clients on another instance than
 *   the one the create was sent to (with one instance: every delivery — the base line).
 * - Every (client, record) is counted (a record: its instance and id): lost = 0 deliveries, doubled = more than 1. A
 * phase waits for
 *   all events up to EVENT_TIMEOUT_MS after its last create was answered (or QUIET_MS without any event).
 * - Recovery phase (runRecovery): RECOVERY_CLIENTS more clients dropped for GAP_MS while creates go on;
 *   the share of the events sent while they were away that reached them exactly once.
 * Per instance count: all sides up, a warm-up phase each, then ROUNDS rounds with the side order rotated
 * every round, then a recovery phase per side; medians over rounds, lost/doubled summed over every
 * measured phase. Ratios are against the PostgreSQL anchor.
 *
 * Needs RETHINKDB_URL (rethinkdb://host:port; the database in the URL is ignored), redis-server and
 * PostgreSQL 15 ($POSTGRES_BIN, default Debian's /usr/lib/postgresql/15/bin). BENCH_QUICK=1: one round.
 * REALTIME_INSTANCES=1,2: only those instance counts. REALTIME_SIDES=plumage: only those sides (plumage, postgres,
 * memory; redis-server and PostgreSQL are started only when a side needs them). REALTIME_RECEIVER_THREADS=<n>:
 * worker threads the receiving clients are spread over (default 2). REALTIME_SERVER=<file>: another
 * build of the plumage server than dist/plumage.mjs (to compare two builds). RETHINKDB_PID=<pid>: the RethinkDB
 * server's process on this machine, whose CPU time is then counted per create beside the instances' and the
 * driver's. REALTIME_PROFILE=<dir>: the first plumage instance runs with `--cpu-prof`, its profile written there when
 * it stops. Results go to bench/results/<date>-realtime.json/.md; a full run also rewrites the realtime table in
 * BENCHMARKS.md.
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads'
import knex from 'knex'
import { r, type Connection } from 'rethinkdb-ts'
import { io as connectClient, type Socket } from 'socket.io-client'
import { BENCH_USER } from './support/auth-setup.js'
import { freePort, hasCommand, killChildren, startChild, stopChild } from './support/processes.js'
import { BENCH_BCRYPT_ROUNDS as BCRYPT_ROUNDS, spawnPlumage } from './support/plumage-process.js'
import { ANCHOR_TABLES_SQL, POSTGRES_BIN, startPostgres, type Postgres } from './support/postgres.js'
import { loadText, machine, replaceSection } from './support/report.js'

const QUICK = process.env.BENCH_QUICK === '1'
const CLIENTS = 50
/** Worker threads the receiving clients are spread over. */
const RECEIVER_THREADS = Number(process.env.REALTIME_RECEIVER_THREADS ?? 2)
const CREATES = 500
const IN_FLIGHT = 20
const WARMUP_CREATES = 100
const ROUNDS = QUICK ? 1 : 3
const INSTANCE_COUNTS = (process.env.REALTIME_INSTANCES ?? '1,2,4').split(',').map(Number)
const FULL_RUN = !QUICK && process.env.REALTIME_INSTANCES === undefined && process.env.REALTIME_SIDES === undefined
const EVENT_TIMEOUT_MS = 20_000
const QUIET_MS = 5_000
/** After the last expected event: how long to keep counting, so late duplicates are seen. */
const GRACE_MS = 500
const CALL_TIMEOUT_MS = 15_000
/** Recovery phase: clients dropped, for how long, and the creates before the drop and after the return. */
const RECOVERY_CLIENTS = 10
const GAP_MS = 5_000
const LEAD_MS = 1_000
/** bcrypt cost on both sides: logins are setup here, not the measured work. */

const now = () => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Id = string | number
/**
 * What identifies a record: the instance it was created on and its id. The Feathers instances keep their
 * own memory stores, which number records from 0 each; plumage's RethinkDB ids are unique anyway.
 */
const recordKey = (from: number | undefined, id: Id) => `${from}:${id}`
/** What every create sends; the created record (and its event) carries it back. */
interface Stamp {
  t: number
  from: number
  p: number
}

/** Feathers socket protocol: `emit(method, path, ...args, callback(error, result))`, bounded by `timeoutMs`. */
function call(socket: Socket, timeoutMs: number, method: string, path: string, ...args: unknown[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no answer to ${method} ${path} within ${timeoutMs} ms`)),
      timeoutMs
    )
    socket.emit(method, path, ...args, (error: unknown, result: unknown) => {
      clearTimeout(timer)
      if (error) reject(new Error(`${method} ${path} failed: ${JSON.stringify(error)}`))
      else resolve(result)
    })
  })
}

/** A socket.io connection logged in with the local strategy (it then joins the 'authenticated' channel). */
async function login(url: string, reconnectAfterMs?: number): Promise<Socket> {
  // With `reconnectAfterMs`: the client reconnects by itself that long after its connection dropped
  // (no jitter), as the official client does with its default settings after ~1 s.
  const reconnection =
    reconnectAfterMs === undefined
      ? { reconnection: false }
      : {
          reconnection: true,
          reconnectionDelay: reconnectAfterMs,
          reconnectionDelayMax: reconnectAfterMs,
          randomizationFactor: 0
        }
  const socket = connectClient(url, { transports: ['websocket'], ...reconnection, forceNew: true, timeout: 10_000 })
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve())
      socket.once('connect_error', reject)
    })
    await call(socket, CALL_TIMEOUT_MS, 'create', 'authentication', { strategy: 'local', ...BENCH_USER }, {})
    return socket
  } catch (error) {
    socket.disconnect()
    throw error
  }
}

// ---------------------------------------------------------------------------------------------------
// Worker thread: the receiving clients of one side.

interface ReceiverSetup {
  urls: string[]
  clients: number
  /** The first client's number (clients of several threads spread over the instances as one list). */
  first: number
}
type ToWorker = { type: 'phase'; id: number } | { type: 'expect'; keys: string[] }

interface PhaseReport {
  /** First deliveries (client, record) of this phase. */
  unique: number
  lost: number
  /** (client, record) pairs delivered more than once, and the deliveries beyond the first. */
  doubled: number
  extra: number
  /** Deliveries of records of this phase whose create was not answered (not among the expected records). */
  unexpected: number
  /** Events of an earlier phase that arrived during this one. */
  stray: number
  disconnects: number
  complete: boolean
  lastUnique: number
  /** Latencies (ms) of first deliveries: to clients on another instance than the sender / the same. */
  cross: number[]
  local: number[]
}

interface PhaseState {
  id: number
  counts: Map<string, number>[]
  unique: number
  lastUnique: number
  lastEvent: number
  cross: number[]
  local: number[]
}

async function receive({ urls, clients, first }: ReceiverSetup): Promise<void> {
  const port = parentPort!
  const home = (client: number) => (first + client) % urls.length
  const sockets = await Promise.all(Array.from({ length: clients }, (_, client) => login(urls[home(client)]!)))
  let state: PhaseState | undefined
  let stray = 0
  let disconnects = 0
  sockets.forEach((socket, client) => {
    socket.on('disconnect', () => disconnects++)
    socket.on('messages created', (data: Partial<Stamp> & { id: Id }) => {
      const at = now()
      if (!state || data.p !== state.id) {
        stray++
        return
      }
      state.lastEvent = at
      const counts = state.counts[client]!
      const key = recordKey(data.from, data.id)
      const seen = counts.get(key) ?? 0
      counts.set(key, seen + 1)
      if (seen > 0) return
      state.unique++
      state.lastUnique = at
      ;(data.from === home(client) ? state.local : state.cross).push(at - data.t!)
    })
  })

  async function settle(current: PhaseState, keys: string[]): Promise<PhaseReport> {
    const target = keys.length * clients
    const answered = now()
    const deadline = answered + EVENT_TIMEOUT_MS
    while (current.unique < target && now() < deadline && now() - Math.max(current.lastEvent, answered) < QUIET_MS)
      await sleep(20)
    await sleep(GRACE_MS)
    const expected = new Set(keys)
    let lost = 0
    let doubled = 0
    let extra = 0
    let unexpected = 0
    for (const counts of current.counts) {
      for (const id of expected) if (!counts.has(id)) lost++
      for (const [id, count] of counts) {
        if (!expected.has(id)) unexpected += count
        else if (count > 1) {
          doubled++
          extra += count - 1
        }
      }
    }
    const report: PhaseReport = {
      unique: current.unique,
      lost,
      doubled,
      extra,
      unexpected,
      stray,
      disconnects,
      complete: lost === 0,
      lastUnique: current.lastUnique,
      cross: current.cross,
      local: current.local
    }
    stray = 0
    return report
  }

  port.on('message', (message: ToWorker) => {
    if (message.type === 'phase') {
      state = {
        id: message.id,
        counts: sockets.map(() => new Map()),
        unique: 0,
        lastUnique: 0,
        lastEvent: 0,
        cross: [],
        local: []
      }
      port.postMessage({ type: 'phase-ready' })
    } else {
      void settle(state!, message.keys).then((report) => port.postMessage(report))
    }
  })
  port.postMessage({ type: 'ready' })
}

/** The main thread's handle on a receiver worker: one request at a time, answers in order. */
class Receivers {
  private readonly waiting: { resolve: (value: unknown) => void; reject: (error: Error) => void }[] = []
  private failure?: Error

  private constructor(private readonly worker: Worker) {
    worker.on('message', (message) => this.waiting.shift()?.resolve(message))
    const fail = (error: Error) => {
      this.failure ??= error
      for (const waiter of this.waiting.splice(0)) waiter.reject(this.failure)
    }
    worker.on('error', (error) => fail(new Error(`receiver worker failed: ${error.message}`)))
    worker.on('exit', (code) => fail(new Error(`receiver worker exited (code ${code})`)))
  }

  static async start(setup: ReceiverSetup): Promise<Receivers> {
    const receivers = new Receivers(new Worker(new URL(import.meta.url), { workerData: setup }))
    await receivers.next(60_000)
    return receivers
  }

  /** Sends `message` (if any) and resolves with the worker's next message. */
  async next<T>(timeoutMs: number, message?: ToWorker): Promise<T> {
    if (this.failure) throw this.failure
    let timer: ReturnType<typeof setTimeout> | undefined
    try {
      return await new Promise<T>((resolve, reject) => {
        this.waiting.push({ resolve: resolve as (value: unknown) => void, reject })
        timer = setTimeout(
          () => reject(new Error(`receiver worker did not answer within ${timeoutMs / 1000} s`)),
          timeoutMs
        )
        if (message) this.worker.postMessage(message)
      })
    } finally {
      clearTimeout(timer)
    }
  }

  close(): Promise<number> {
    return this.worker.terminate()
  }
}

/**
 * The receiving clients split over RECEIVER_THREADS worker threads (each its share of the clients): one
 * thread parsing every delivery of 50 clients queues them behind each other, and its backlog shows up in
 * the latencies of every side. Phases go to all threads; their reports are added up.
 */
class ReceiverPool {
  private constructor(private readonly threads: Receivers[]) {}

  static async start(urls: string[], clients: number): Promise<ReceiverPool> {
    const share = Math.ceil(clients / RECEIVER_THREADS)
    const threads = await Promise.all(
      Array.from({ length: RECEIVER_THREADS }, (_, index) =>
        Receivers.start({ urls, first: index * share, clients: Math.min(share, clients - index * share) })
      )
    )
    return new ReceiverPool(threads)
  }

  async phase(id: number): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.next(10_000, { type: 'phase', id })))
  }

  async expect(keys: string[], timeoutMs: number): Promise<PhaseReport> {
    const reports = await Promise.all(
      this.threads.map((thread) => thread.next<PhaseReport>(timeoutMs, { type: 'expect', keys }))
    )
    const sum = (pick: (report: PhaseReport) => number) => reports.reduce((total, report) => total + pick(report), 0)
    return {
      unique: sum((report) => report.unique),
      lost: sum((report) => report.lost),
      doubled: sum((report) => report.doubled),
      extra: sum((report) => report.extra),
      unexpected: sum((report) => report.unexpected),
      stray: sum((report) => report.stray),
      disconnects: sum((report) => report.disconnects),
      complete: reports.every((report) => report.complete),
      lastUnique: Math.max(...reports.map((report) => report.lastUnique)),
      cross: reports.flatMap((report) => report.cross),
      local: reports.flatMap((report) => report.local)
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()))
  }
}

// ---------------------------------------------------------------------------------------------------
// Main thread: instances, load, report.

/**
 * plumage; the anchor: Feathers v5 + @feathersjs/knex on PostgreSQL + feathers-sync; the ceiling: the
 * same Feathers app on memory services (no durable write).
 */
type SideName = 'plumage' | 'postgres' | 'memory'
const SIDES: SideName[] = ['plumage', 'postgres', 'memory']
/** The sides this run measures (REALTIME_SIDES, default all). */
const RUN_SIDES = (process.env.REALTIME_SIDES?.split(',') ?? SIDES) as SideName[]
const LABEL: Record<SideName, string> = {
  plumage: 'plumage (RethinkDB)',
  postgres: '**anchor:** Feathers v5 + knex (PostgreSQL) + feathers-sync (Redis)',
  memory: 'ceiling: Feathers v5 + memory + feathers-sync (Redis)'
}

interface Side {
  name: SideName
  instances: { url: string; child: ChildProcess }[]
  senders: Socket[]
  receivers?: ReceiverPool
  /** plumage: the database these instances share, dropped when they stop. */
  db?: string
}

interface PhaseResult extends Omit<PhaseReport, 'cross' | 'local'> {
  started: number
  failedCreates: number
  firstError?: string
  /** Creates answered per second (the write path; an upper bound for events/s ÷ clients). */
  createsPerSecond: number
  eventsPerSecond: number
  /** Cross-instance latency (all deliveries with one instance), ms. */
  p50: number
  p99: number
  localP50: number
  localP99: number
  samples: number
  /**
   * CPU time (ms) per create, from the first create sent until every client had every event (or gave up):
   * each instance's, the RethinkDB server's (RETHINKDB_PID; NaN without) and the driver's (senders and clients).
   */
  cpu: { instances: number[]; rethinkdb: number; driver: number }
}

interface RoundResult {
  load: PhaseResult
  paced: PhaseResult
}

function percentile(values: number[], q: number): number {
  if (values.length === 0) return NaN
  const sorted = Float64Array.from(values).sort()
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!
}

let phaseCounter = 0

/** The RethinkDB server's process, when given (RETHINKDB_PID): its CPU time is counted per create. */
const RETHINKDB_PID = process.env.RETHINKDB_PID ? Number(process.env.RETHINKDB_PID) : undefined

/** CPU time (user + system, ms) of a process of this machine, all its threads, from /proc; NaN where unreadable. */
function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks (100/s).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return NaN
  }
}

/** CPU time so far of the side's instances, the RethinkDB server (if given) and this driver (its clients included). */
function cpuNow(side: Side): { instances: number[]; rethinkdb: number; driver: number } {
  const { user, system } = process.cpuUsage()
  return {
    instances: side.instances.map(({ child }) => processCpuMs(child.pid)),
    rethinkdb: processCpuMs(RETHINKDB_PID),
    driver: (user + system) / 1000
  }
}

async function runPhase(side: Side, creates: number, inFlight: number): Promise<PhaseResult> {
  const id = ++phaseCounter
  const receivers = side.receivers!
  await receivers.phase(id)
  const keys: string[] = []
  let failedCreates = 0
  let firstError: string | undefined
  let next = 0
  const cpuBefore = cpuNow(side)
  const started = now()
  const sender = async () => {
    while (next < creates) {
      const from = next++ % side.senders.length
      try {
        const stamp: Stamp = { t: now(), from, p: id }
        const created = (await call(
          side.senders[from]!,
          CALL_TIMEOUT_MS,
          'create',
          'messages',
          { text: 'hello everyone', ...stamp },
          {}
        )) as { id: Id }
        keys.push(recordKey(from, created.id))
      } catch (error) {
        failedCreates++
        firstError ??= (error as Error).message
      }
    }
  }
  await Promise.all(Array.from({ length: inFlight }, sender))
  const answered = now()
  const { cross, local, ...report } = await receivers.expect(keys, EVENT_TIMEOUT_MS + QUIET_MS + 30_000)
  const cpuAfter = cpuNow(side)
  const perCreate = (before: number, after: number) => (after - before) / creates
  // One instance has no "other" instance: its same-instance latency is the base line.
  const latencies = side.instances.length === 1 ? local : cross
  return {
    cpu: {
      instances: cpuAfter.instances.map((after, index) => perCreate(cpuBefore.instances[index]!, after)),
      rethinkdb: perCreate(cpuBefore.rethinkdb, cpuAfter.rethinkdb),
      driver: perCreate(cpuBefore.driver, cpuAfter.driver)
    },
    ...report,
    started,
    failedCreates,
    ...(firstError ? { firstError } : {}),
    createsPerSecond: creates / ((answered - started) / 1000),
    eventsPerSecond: report.unique === 0 ? 0 : report.unique / ((report.lastUnique - started) / 1000),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    localP50: percentile(local, 0.5),
    localP99: percentile(local, 0.99),
    samples: latencies.length
  }
}

interface RecoveryResult {
  clients: number
  /** Sockets whose reconnection was a recovery (`socket.recovered`); the others logged in again. */
  recovered: number
  /** (client, record) pairs of records sent while that client was away (cut → back and logged in). */
  away: number
  /** … of which delivered exactly once. */
  awayOnce: number
  /** Over every record of the phase, before, during and after the gap. */
  pairs: number
  lost: number
  doubled: number
  failedCreates: number
  firstError?: string
}

/**
 * The recovery phase: RECOVERY_CLIENTS fresh clients (spread over the instances, reconnecting by
 * themselves GAP_MS after a drop) while creates go on, one in flight: after LEAD_MS every client's
 * connection is closed under it (`socket.io.engine.close()`: the server sees a transport close, as with
 * a network that drops); each reconnects GAP_MS later to the same instance and, unless the server
 * recovered its session (`socket.recovered`), logs in again as the Feathers client does on reconnect.
 * Creates go on for LEAD_MS after the last one is back; then the phase waits for the events as
 * runPhase does. Counted per client: the records sent while it was away, delivered exactly once.
 */
async function runRecovery(side: Side): Promise<RecoveryResult> {
  const id = ++phaseCounter
  const urls = side.instances.map(({ url }) => url)
  const sockets = await Promise.all(
    Array.from({ length: RECOVERY_CLIENTS }, (_, client) => login(urls[client % urls.length]!, GAP_MS))
  )
  const counts = sockets.map(() => new Map<string, number>())
  const away = sockets.map(() => ({ cut: Infinity, back: Infinity }))
  let recovered = 0
  let lastEvent = 0
  sockets.forEach((socket, client) => {
    socket.on('messages created', (data: Partial<Stamp> & { id: Id }) => {
      if (data.p !== id) return
      lastEvent = now()
      const key = recordKey(data.from, data.id)
      counts[client]!.set(key, (counts[client]!.get(key) ?? 0) + 1)
    })
    socket.on('connect', () => {
      if (socket.recovered) {
        recovered++
        away[client]!.back = now()
        return
      }
      call(socket, CALL_TIMEOUT_MS, 'create', 'authentication', { strategy: 'local', ...BENCH_USER }, {}).then(
        () => {
          away[client]!.back = now()
        },
        (error: Error) => console.error(`recovery client ${client}: login again failed: ${error.message}`)
      )
    })
  })
  const sent: { key: string; t: number }[] = []
  let failedCreates = 0
  let firstError: string | undefined
  let next = 0
  let stopAt = Infinity
  const writer = (async () => {
    while (now() < stopAt) {
      const from = next++ % side.senders.length
      const stamp: Stamp = { t: now(), from, p: id }
      try {
        const created = (await call(
          side.senders[from]!,
          CALL_TIMEOUT_MS,
          'create',
          'messages',
          { text: 'hello everyone', ...stamp },
          {}
        )) as { id: Id }
        sent.push({ key: recordKey(from, created.id), t: stamp.t })
      } catch (error) {
        failedCreates++
        firstError ??= (error as Error).message
      }
    }
  })()
  try {
    await sleep(LEAD_MS)
    sockets.forEach((socket, client) => {
      away[client]!.cut = now()
      socket.io.engine.close()
    })
    const deadline = now() + GAP_MS + 20_000
    while (away.some(({ back }) => back === Infinity) && now() < deadline) await sleep(50)
    await sleep(LEAD_MS)
  } finally {
    stopAt = 0
    await writer
  }
  const answered = now()
  const target = sent.length * sockets.length
  const delivered = () => counts.reduce((sum, map) => sum + map.size, 0)
  while (
    delivered() < target &&
    now() < answered + EVENT_TIMEOUT_MS &&
    now() - Math.max(lastEvent, answered) < QUIET_MS
  )
    await sleep(20)
  await sleep(GRACE_MS)
  for (const socket of sockets) socket.disconnect()
  const result: RecoveryResult = {
    clients: sockets.length,
    recovered,
    away: 0,
    awayOnce: 0,
    pairs: target,
    lost: 0,
    doubled: 0,
    failedCreates,
    ...(firstError ? { firstError } : {})
  }
  counts.forEach((map, client) => {
    const { cut, back } = away[client]!
    for (const { key, t } of sent) {
      const count = map.get(key) ?? 0
      if (count === 0) result.lost++
      if (count > 1) result.doubled++
      if (t < cut || t > back) continue
      result.away++
      if (count === 1) result.awayOnce++
    }
  })
  return result
}

/**
 * The physical limit: bare single-record inserts with rethinkdb-ts on the same RethinkDB server
 * (default durability, hard; no event log, no events), `inFlight` at a time, the records the bench's
 * creates carry. Inserts acknowledged per second.
 */
async function bareInserts(connection: Connection, db: string, creates: number, inFlight: number): Promise<number> {
  const table = r.db(db).table('messages')
  let next = 0
  const started = now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < creates) {
        const from = next++ % 4
        const result = await table
          .insert({ text: 'hello everyone', t: now(), from, p: 0, userId: 'bench' })
          .run(connection)
        if (result.inserted !== 1) throw new Error(`bare insert: ${JSON.stringify(result)}`)
      }
    })
  )
  return creates / ((now() - started) / 1000)
}

interface Rethink {
  host: string
  port: number
  user?: string
  password?: string
}

function rethinkAddress(url: string): Rethink {
  const parsed = new URL(url)
  if (parsed.protocol !== 'rethinkdb:' || !parsed.hostname)
    throw new Error(`RETHINKDB_URL must look like rethinkdb://127.0.0.1:28015 (got '${url}')`)
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 28015),
    ...(parsed.username ? { user: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {})
  }
}

function rethinkUrl({ host, port, user, password }: Rethink, db: string): string {
  const credentials = user ? `${encodeURIComponent(user)}${password ? `:${encodeURIComponent(password)}` : ''}@` : ''
  return `rethinkdb://${credentials}${host}:${port}/${db}`
}

async function signUp(url: string): Promise<void> {
  const response = await fetch(`${url}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(BENCH_USER),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS)
  })
  if (response.status !== 201)
    throw new Error(`POST ${url}/users answered ${response.status}: ${await response.text()}`)
}

/** Polls GET /health until 200 (RethinkDB: tables writable, feeds live); warns and goes on after `timeoutMs`. */
async function waitHealthy(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = now() + timeoutMs
  let last = ''
  while (now() < deadline) {
    try {
      const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })
      if (response.status === 200) return
      last = `${response.status} ${await response.text()}`
    } catch (error) {
      last = (error as Error).message
    }
    await sleep(200)
  }
  console.warn(`warning: ${url}/health still not 200 after ${timeoutMs / 1000} s (${last}); measuring anyway`)
}

function logLine(text: string): void {
  console.log(`${text}   [load ${loadText()}]`)
}

async function main(): Promise<void> {
  const rethinkdbUrl = process.env.RETHINKDB_URL
  if (!rethinkdbUrl) {
    console.error(
      'bench:realtime needs a RethinkDB server: set RETHINKDB_URL=rethinkdb://127.0.0.1:28015 (e.g. `docker compose up rethinkdb`)'
    )
    process.exit(1)
  }
  if (RUN_SIDES.some((side) => !SIDES.includes(side))) {
    console.error(
      `REALTIME_SIDES must be a comma-separated list of ${SIDES.join(', ')} (got '${process.env.REALTIME_SIDES}')`
    )
    process.exit(1)
  }
  const feathersSides = RUN_SIDES.includes('postgres') || RUN_SIDES.includes('memory')
  if (feathersSides && !hasCommand('redis-server')) {
    console.error(
      'bench:realtime needs redis-server on PATH for the Feathers + feathers-sync anchor (Debian: apt-get install -y redis-server)'
    )
    process.exit(1)
  }
  if (RUN_SIDES.includes('postgres') && !existsSync(join(POSTGRES_BIN, 'postgres'))) {
    console.error(
      `bench:realtime needs PostgreSQL 15 for the Feathers + knex anchor: no ${join(POSTGRES_BIN, 'postgres')} (Debian: apt-get install -y postgresql-15, or set POSTGRES_BIN)`
    )
    process.exit(1)
  }
  if (INSTANCE_COUNTS.some((count) => !Number.isInteger(count) || count < 1)) {
    console.error(
      `REALTIME_INSTANCES must be a comma-separated list of positive integers (got '${process.env.REALTIME_INSTANCES}')`
    )
    process.exit(1)
  }
  const plumageMain = process.env.REALTIME_SERVER ?? fileURLToPath(new URL('../plumage.mjs', import.meta.url))
  if (!existsSync(plumageMain))
    throw new Error(`${plumageMain} is missing: run \`npm run build\` first (npm run bench:realtime does)`)
  const feathersServer = fileURLToPath(new URL('./support/feathers-sync-server.mjs', import.meta.url))

  const rethink = rethinkAddress(rethinkdbUrl)
  let connection: Connection
  try {
    connection = await r.connect({
      host: rethink.host,
      port: rethink.port,
      ...(rethink.user ? { user: rethink.user } : {}),
      ...(rethink.password ? { password: rethink.password } : {}),
      timeout: 5,
      silent: true
    })
  } catch (error) {
    console.error(
      `bench:realtime needs a RethinkDB server: none answers at ${rethink.host}:${rethink.port} (RETHINKDB_URL): ${(error as Error).message}`
    )
    process.exit(1)
  }

  const info = machine()
  const mark = (point: string) => {
    info.load[point] = loadavg()
  }
  const prefix = `bench_realtime_${randomBytes(4).toString('hex')}`
  const databases: string[] = []
  const redisDir = mkdtempSync(join(tmpdir(), 'bench-realtime-redis-'))
  let redis: ChildProcess | undefined
  let postgres: Postgres | undefined
  const sides: Side[] = []
  const results: SideResult[] = []
  const bare: { load: number[]; paced: number[] } = { load: [], paced: [] }
  const recoveries: { instances: number; side: SideName; result: RecoveryResult }[] = []

  const stopSide = async (side: Side) => {
    for (const socket of side.senders) socket.disconnect()
    await side.receivers?.close()
    await Promise.all(
      side.instances.map(({ child }) => stopChild(child, side.name === 'plumage' ? 'SIGTERM' : 'SIGKILL'))
    )
    if (side.db)
      await r
        .dbDrop(side.db)
        .run(connection)
        .catch(() => undefined)
    sides.splice(sides.indexOf(side), 1)
  }

  const settings =
    `${CLIENTS} socket.io clients (${RECEIVER_THREADS} worker threads) spread over the instances, ${CREATES} creates spread over the instances per phase: ` +
    `load phase ${IN_FLIGHT} in flight (events/s, latency under load), paced phase 1 in flight; warm-up ${WARMUP_CREATES} creates; ` +
    `median of ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} (side order rotated each round); bcrypt ${BCRYPT_ROUNDS}${QUICK ? ' (BENCH_QUICK)' : ''}. ` +
    `Recovery: ${RECOVERY_CLIENTS} more clients dropped for ${GAP_MS / 1000} s while creates go on (one in flight).`
  console.log(
    `npm run bench:realtime${QUICK ? ' (quick)' : ''}: ${info.cores} × ${info.cpus}, Node ${info.node}; RethinkDB ${rethink.host}:${rethink.port}, databases ${prefix}_<instances>\n${settings}\n`
  )
  mark('start')
  try {
    const redisPort = await freePort()
    const redisUrl = `redis://127.0.0.1:${redisPort}`
    if (feathersSides) {
      const started = await startChild(
        'redis-server',
        'redis-server',
        ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', redisDir],
        process.env,
        (line) => (/Ready to accept connections/.test(line) ? true : undefined),
        { timeoutMs: 15_000 }
      )
      redis = started.child
      logLine(`redis-server pid ${redis.pid} on ${redisUrl}`)
    }
    if (RUN_SIDES.includes('postgres')) {
      postgres = await startPostgres()
      logLine(`postgres pid ${postgres.pid} on ${postgres.url} (fsync on, synchronous_commit on)`)
    }

    // The physical limit, before any instance runs: bare inserts on the RethinkDB server plumage uses.
    const bareDb = `${prefix}_bare`
    databases.push(bareDb)
    await r.dbCreate(bareDb).run(connection)
    await r.db(bareDb).tableCreate('messages').run(connection)
    await bareInserts(connection, bareDb, WARMUP_CREATES, IN_FLIGHT)
    for (let round = 0; round < ROUNDS; round++) {
      bare.load.push(await bareInserts(connection, bareDb, CREATES, IN_FLIGHT))
      bare.paced.push(await bareInserts(connection, bareDb, CREATES, 1))
    }
    await r.dbDrop(bareDb).run(connection)
    logLine(
      `bare inserts on RethinkDB: ${bare.load.map(Math.round).join(', ')}/s (${IN_FLIGHT} in flight), ${bare.paced.map(Math.round).join(', ')}/s (1 in flight)`
    )

    for (const count of INSTANCE_COUNTS) {
      const counted: Side[] = []
      if (RUN_SIDES.includes('plumage')) counted.push(await startPlumage(count))
      if (postgres) {
        // The anchor: every instance on the one PostgreSQL database, its tables made anew for this count.
        const reset = knex({ client: 'pg', connection: postgres.url })
        await reset.raw(ANCHOR_TABLES_SQL).finally(() => reset.destroy())
        const anchor = await startFeathers('postgres', count, { REDIS_URL: redisUrl, POSTGRES_URL: postgres.url })
        await signUp(anchor.instances[0]!.url)
        counted.push(anchor)
      }
      if (RUN_SIDES.includes('memory')) {
        // The ceiling: memory services per instance, so the user signs up on each.
        const ceiling = await startFeathers('memory', count, { REDIS_URL: redisUrl })
        for (const { url } of ceiling.instances) await signUp(url)
        counted.push(ceiling)
      }
      for (const side of counted) {
        side.senders = await Promise.all(side.instances.map(({ url }) => login(url)))
        side.receivers = await ReceiverPool.start(
          side.instances.map(({ url }) => url),
          CLIENTS
        )
      }
      logLine(`${count} instance${count === 1 ? '' : 's'} per side up, ${CLIENTS} clients logged in on each side`)

      const runs = new Map(
        counted.map((side) => [
          side.name,
          {
            instances: count,
            side: side.name,
            warmup: undefined as PhaseResult | undefined,
            rounds: [] as RoundResult[]
          }
        ])
      )
      for (const side of counted) {
        const warmup = await runPhase(side, WARMUP_CREATES, IN_FLIGHT)
        runs.get(side.name)!.warmup = warmup
        logLine(`  warm-up ${side.name}: ${describe(warmup)}`)
      }
      for (let round = 0; round < ROUNDS; round++) {
        const order = counted.map((_, index) => counted[(index + round) % counted.length]!)
        for (const side of order) {
          const load = await runPhase(side, CREATES, IN_FLIGHT)
          const paced = await runPhase(side, CREATES, 1)
          runs.get(side.name)!.rounds.push({ load, paced })
          logLine(`  ${count}× ${side.name} round ${round + 1}: load ${describe(load)}; paced ${describe(paced)}`)
        }
      }
      for (const side of counted) {
        const result = await runRecovery(side)
        recoveries.push({ instances: count, side: side.name, result })
        logLine(`  ${count}× ${side.name} recovery: ${describeRecovery(result)}`)
      }
      for (const run of runs.values()) results.push({ ...run, warmup: run.warmup! })
      for (const side of counted) await stopSide(side)
      mark(`${count} instance${count === 1 ? '' : 's'}`)
    }
  } finally {
    for (const side of [...sides]) await stopSide(side).catch(() => undefined)
    if (redis) await stopChild(redis, 'SIGTERM')
    rmSync(redisDir, { recursive: true, force: true })
    await postgres?.stop()
    for (const db of databases)
      await r
        .dbDrop(db)
        .run(connection)
        .catch(() => undefined)
    await connection.close().catch(() => undefined)
    killChildren()
  }

  async function startPlumage(count: number): Promise<Side> {
    // plumage: instances one after the other (the first creates the database and tables; concurrent
    // table creation in RethinkDB can make duplicates), each healthy before the next.
    const plumage: Side = { name: 'plumage', instances: [], senders: [], db: `${prefix}_${count}` }
    sides.push(plumage)
    databases.push(plumage.db!)
    for (let index = 0; index < count; index++) {
      const name = `plumage #${index + 1}`
      const profile = index === 0 && process.env.REALTIME_PROFILE
      const { child, value: url } = await spawnPlumage(
        name,
        plumageMain,
        { STORE: 'rethinkdb', RETHINKDB_URL: rethinkUrl(rethink, plumage.db!) },
        profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []
      )
      plumage.instances.push({ url, child })
      await waitHealthy(url)
    }
    await signUp(plumage.instances[0]!.url)
    return plumage
  }

  async function startFeathers(name: SideName, count: number, env: Record<string, string>): Promise<Side> {
    const side: Side = { name, instances: [], senders: [] }
    sides.push(side)
    await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const { child, value: port } = await startChild(
          `Feathers ${name} #${index + 1}`,
          process.execPath,
          [feathersServer],
          { ...process.env, NODE_ENV: 'production', BCRYPT_ROUNDS, SYNC_KEY: `feathers-sync-${name}`, ...env },
          (line) => /^READY (\d+)$/.exec(line)?.[1]
        )
        side.instances[index] = { url: `http://127.0.0.1:${port}`, child }
      })
    )
    return side
  }
  mark('end')

  const rows = summarize(results)
  const bareRow = { load: median(bare.load), paced: median(bare.paced) }
  const table = markdown(rows, bareRow, recoveries, info, settings)
  console.log(`\n${table}\n`)
  const stamp =
    new Date()
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z') +
    (FULL_RUN ? '' : '-partial') +
    '-realtime'
  const dir = join(process.cwd(), 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, `${stamp}.json`),
    JSON.stringify(
      { date: new Date().toISOString(), quick: QUICK, settings, machine: info, rows, bare, recoveries, runs: results },
      null,
      2
    ) + '\n'
  )
  writeFileSync(join(dir, `${stamp}.md`), `# npm run bench:realtime — ${new Date().toISOString()}\n\n${table}\n`)
  const written = [`bench/results/${stamp}.json`, `bench/results/${stamp}.md`]
  if (FULL_RUN && replaceSection('realtime-run', table)) written.push('BENCHMARKS.md')
  console.log(`written: ${written.join(', ')}`)
  const unreliable = rows
    .filter((row) => row.lost > 0 || row.doubled > 0)
    .map((row) => `${row.instances}× ${row.side} (lost ${row.lost}, doubled ${row.doubled})`)
  if (unreliable.length > 0) console.log(`events lost or doubled: ${unreliable.join('; ')}`)
}

function describeRecovery(result: RecoveryResult): string {
  return (
    `${result.awayOnce}/${result.away} events sent while away delivered exactly once (${percent(result.awayOnce, result.away)}), ` +
    `${result.recovered}/${result.clients} sockets recovered; whole phase ${result.pairs} pairs, ${result.lost} lost, ${result.doubled} doubled` +
    (result.failedCreates ? `, ${result.failedCreates} creates failed (${result.firstError})` : '')
  )
}

const percent = (part: number, whole: number) => (whole === 0 ? '—' : `${((100 * part) / whole).toFixed(1)} %`)

const ms = (value: number) => (Number.isNaN(value) ? '—' : value.toFixed(1))

function describe(phase: PhaseResult): string {
  const problems = [
    phase.lost ? `${phase.lost} lost` : '',
    phase.doubled ? `${phase.doubled} doubled (${phase.extra} extra)` : '',
    phase.unexpected ? `${phase.unexpected} unexpected` : '',
    phase.stray ? `${phase.stray} stray` : '',
    phase.disconnects ? `${phase.disconnects} disconnects` : '',
    phase.failedCreates ? `${phase.failedCreates} creates failed (${phase.firstError})` : ''
  ].filter(Boolean)
  const { instances, rethinkdb, driver } = phase.cpu
  const cpu =
    `CPU ms/create: instances ${instances.map((value) => value.toFixed(2)).join(' + ')}` +
    `${Number.isNaN(rethinkdb) ? '' : `, RethinkDB ${rethinkdb.toFixed(2)}`}, driver ${driver.toFixed(2)}`
  return `${Math.round(phase.eventsPerSecond)} events/s (${Math.round(phase.createsPerSecond)} creates/s), p50 ${ms(phase.p50)} / p99 ${ms(phase.p99)} ms; ${cpu}${problems.length ? ` — ${problems.join(', ')}` : ''}`
}

interface SummaryRow {
  instances: number
  side: SideName
  eventsPerSecond: number
  createsPerSecond: number
  p50: number
  p99: number
  pacedP50: number
  pacedP99: number
  lost: number
  doubled: number
  /** (client, record) deliveries checked for lost/doubled, over all measured phases. */
  checked: number
  failedCreates: number
  eventsRatio?: number
  p99Ratio?: number
  pacedP99Ratio?: number
}

const median = (values: number[]) => {
  const present = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b)
  return present.length === 0 ? NaN : present[Math.floor(present.length / 2)]!
}

interface SideResult {
  instances: number
  side: SideName
  warmup: PhaseResult
  rounds: RoundResult[]
}

/** Goals of plumage against the PostgreSQL anchor (issue 21). */
const GOAL_EVENTS = 1.2
const GOAL_P99 = 0.5

function summarize(results: SideResult[]): SummaryRow[] {
  const rows: SummaryRow[] = results.map(({ instances, side, rounds }) => {
    const phases = rounds.flatMap(({ load, paced }) => [load, paced])
    return {
      instances,
      side,
      eventsPerSecond: median(rounds.map(({ load }) => load.eventsPerSecond)),
      createsPerSecond: median(rounds.map(({ load }) => load.createsPerSecond)),
      p50: median(rounds.map(({ load }) => load.p50)),
      p99: median(rounds.map(({ load }) => load.p99)),
      pacedP50: median(rounds.map(({ paced }) => paced.p50)),
      pacedP99: median(rounds.map(({ paced }) => paced.p99)),
      lost: phases.reduce((sum, phase) => sum + phase.lost, 0),
      doubled: phases.reduce((sum, phase) => sum + phase.doubled, 0),
      checked: phases.reduce((sum, phase) => sum + (CREATES - phase.failedCreates) * CLIENTS, 0),
      failedCreates: phases.reduce((sum, phase) => sum + phase.failedCreates, 0)
    }
  })
  for (const row of rows) {
    const anchor = rows.find((other) => other.instances === row.instances && other.side === 'postgres')
    if (row.side === 'postgres' || !anchor) continue
    row.eventsRatio = row.eventsPerSecond / anchor.eventsPerSecond
    row.p99Ratio = row.p99 / anchor.p99
    row.pacedP99Ratio = row.pacedP99 / anchor.pacedP99
  }
  return rows.sort((a, b) => a.instances - b.instances || SIDES.indexOf(a.side) - SIDES.indexOf(b.side))
}

function markdown(
  rows: SummaryRow[],
  bare: { load: number; paced: number },
  recoveries: { instances: number; side: SideName; result: RecoveryResult }[],
  info: ReturnType<typeof machine>,
  settings: string
): string {
  const number = (value: number) => (Number.isNaN(value) ? '—' : Math.round(value).toLocaleString('en-US'))
  // Goals apply to plumage only; the ceiling's ratios are shown for scale.
  const ratio = (row: SummaryRow, value: number | undefined, good?: (value: number) => boolean) =>
    value === undefined || !Number.isFinite(value)
      ? '—'
      : `${value.toFixed(2)}×${row.side === 'plumage' && good ? (good(value) ? ' ✅' : ' ❌') : ''}`
  const count = (value: number) => `${value === 0 ? '0 ✅' : `${value.toLocaleString('en-US')} ❌`}`
  const lines = [
    `| instances | side | events/s (${IN_FLIGHT} in flight) | creates/s | cross-instance p50 ms | p99 ms | paced p50 ms | paced p99 ms | lost | doubled | events/s ÷ anchor (goal ≥ ${GOAL_EVENTS}) | p99 ÷ anchor (goal ≤ ${GOAL_P99}) | paced p99 ÷ anchor |`,
    '|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    `| — | physical limit: bare single-record inserts, same RethinkDB² | — | ${number(bare.load)} (1 in flight: ${number(bare.paced)}) | — | — | — | — | — | — | — | — | — |`
  ]
  for (const row of rows) {
    const instances = row.instances === 1 ? '1 (base line¹)' : String(row.instances)
    // A ratio only meets its goal when both sides delivered every event exactly once.
    const anchor = rows.find((other) => other.instances === row.instances && other.side === 'postgres')
    const exact = row.lost + row.doubled + (anchor ? anchor.lost + anchor.doubled : 0) === 0
    lines.push(
      `| ${instances} | ${LABEL[row.side]} | ${number(row.eventsPerSecond)} | ${number(row.createsPerSecond)} | ${ms(row.p50)} | ${ms(row.p99)} | ${ms(row.pacedP50)} | ${ms(row.pacedP99)} | ` +
        `${count(row.lost)} | ${count(row.doubled)} | ${ratio(row, row.eventsRatio, (v) => exact && v >= GOAL_EVENTS)} | ${ratio(row, row.p99Ratio, (v) => exact && v <= GOAL_P99)} | ` +
        `${ratio(row, row.pacedP99Ratio)} |`
    )
  }
  const recovery = [
    `| instances | side | sockets recovered | events sent while away, per client | delivered exactly once (goal 100 %) | whole phase: lost | doubled |`,
    '|--:|---|--:|--:|--:|--:|--:|'
  ]
  for (const { instances, side, result } of recoveries) {
    const share = percent(result.awayOnce, result.away)
    const goal = side === 'plumage' ? (result.away > 0 && result.awayOnce === result.away ? ' ✅' : ' ❌') : ''
    recovery.push(
      `| ${instances} | ${LABEL[side]} | ${result.recovered} / ${result.clients} | ${number(result.away / result.clients)} | ${share}${goal} | ` +
        `${result.lost.toLocaleString('en-US')} | ${result.doubled.toLocaleString('en-US')} |`
    )
  }
  const checked = rows[0]?.checked ?? 0
  const failed = rows
    .filter((row) => row.failedCreates > 0)
    .map((row) => `${row.instances}× ${row.side}: ${row.failedCreates}`)
  const recoveryFailed = recoveries
    .filter(({ result }) => result.failedCreates > 0)
    .map(({ instances, side, result }) => `${instances}× ${side}: ${result.failedCreates}`)
  const load = Object.entries(info.load)
    .map(([point, values]) => `${point} ${loadText(values)}`)
    .join('; ')
  return [
    lines.join('\n'),
    '',
    '¹ One instance has no other instance: its latency columns are same-instance delivery, the base line for the cross-instance figures.',
    `² rethinkdb-ts \`insert\` of one record per query, ${IN_FLIGHT} in flight (1 in flight in brackets), default (hard) durability, no event log and no events: the most the server acknowledges.`,
    `Lost and doubled: (client, record) pairs over every measured phase, ${checked.toLocaleString('en-US')} checked per row${failed.length ? `; creates that failed: ${failed.join(', ')}` : ''}. ` +
      'events/s counts first deliveries until the last one; with events lost it is not all events, so no ratio meets its goal then. ' +
      'creates/s: creates answered per second in the same phase (plumage writes to RethinkDB, the anchor to PostgreSQL, the ceiling to memory).',
    '',
    recovery.join('\n'),
    '',
    `Recovery: ${RECOVERY_CLIENTS} more clients, spread over the instances, each dropped (\`socket.io.engine.close()\`) for ${GAP_MS / 1000} s while creates go on (one in flight); ` +
      'each reconnects to its instance by itself and logs in again unless its session was recovered. "While away": records sent between its drop and its return (logged in again). ' +
      `Whole phase: every record from ${LEAD_MS / 1000} s before the drop to ${LEAD_MS / 1000} s after the last return, per client${recoveryFailed.length ? `; creates that failed: ${recoveryFailed.join(', ')}` : ''}.`,
    '',
    `Machine: ${info.cores} × ${info.cpus}, ${info.memoryGb.toFixed(1)} GB, Node ${info.node}. ${settings}`,
    `Load average (1/5/15 min): ${load}.`
  ].join('\n')
}

if (!isMainThread) {
  await receive(workerData as ReceiverSetup)
} else {
  // Ctrl-C or a kill of the driver must not leave instances or redis-server behind.
  process.once('exit', killChildren)
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      killChildren()
      process.exit(130)
    })
  try {
    await main()
    process.exit(0)
  } catch (error) {
    console.error(`bench:realtime failed: ${(error as Error).stack ?? String(error)}`)
    killChildren()
    process.exit(1)
  }
}
