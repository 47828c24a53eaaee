/**
 * `npm run bench`: plumage (on express, its default HTTP engine, and on fastify) vs Feathers v5 vs raw
 * express and raw fastify, side by side in one run.
 *
 * - REST (autocannon, 50 connections): each server in its own process (bench/support/*-server.ts,
 *   same routes, same 1000 seeded records, same bcrypt cost and JWT claims), a warm-up per target,
 *   then ROUNDS rounds interleaved between targets (rotating who goes first); the median round counts.
 * - Socket fan-out: bench/socket.ts's `fanOut` (50 clients, 500 creates).
 * - Cold start of the built server (`node dist/plumage.mjs`) vs the same app on Feathers, median of
 *   several spawns; idle RSS after start and a full GC; peak RSS (VmHWM) of the servers under load.
 *
 * BENCH_QUICK=1: one short round of everything (a smoke run of about a minute).
 * BENCH_DURATION: seconds per measured round (default 3).
 * BENCH_ONLY=<regexp>: only the rows whose name matches (e.g. 'find|cold'); results are then not saved.
 */
import autocannon from 'autocannon'
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { isMainThread } from 'node:worker_threads'
import { fanOut } from './socket.js'
import { BENCH_SECRET, BENCH_USER, SECURE_PATH, bearerHeader } from './support/auth-setup.js'
import { coldStart, type ColdStart } from './support/cold-start.js'
import { loadText, machine, markdown, save, type Row } from './support/report.js'
import { memoryOf, startTarget, waitIdle, type Target } from './support/servers.js'

const QUICK = process.env.BENCH_QUICK === '1'
const DURATION = QUICK ? 1 : Number(process.env.BENCH_DURATION ?? 3)
const ROUNDS = QUICK ? 1 : 3
const WARMUP = QUICK ? 0.5 : 1
const SPAWNS = QUICK ? 2 : 7
const SOCKET_ROUNDS = QUICK ? 1 : 5
const CONNECTIONS = 50
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY, 'i') : undefined
const selected = (name: string) => !ONLY || ONLY.test(name)

interface Workload {
  name: string
  method?: 'GET' | 'POST' | 'PATCH'
  path: string
  body?: unknown
  authenticated?: boolean
  /** plumage (express) ÷ Feathers (issue 9). */
  goal?: number
  /** plumage (fastify) ÷ Feathers (issue 16); on every REST row it must also reach FASTIFY_FLOOR × raw fastify. */
  fastifyGoal?: number
  /** Seconds per round when the default is too short to complete requests (bcrypt). */
  duration?: number
}

const message = { text: 'a new message', user: 'user1', room: 'random', stars: '3' }
// Reads first, then writes; creates late, since every create grows the collection later finds would scan.
const workloads: Workload[] = [
  { name: 'find (page of 10)', path: '/messages', goal: 1.25, fastifyGoal: 3 },
  {
    name: 'filtered + sorted find',
    goal: 3,
    path: '/messages?room=general&user[$in][0]=user3&user[$in][1]=user6&user[$in][2]=user9&stars[$ne]=7&$sort[text]=-1&$limit=5'
  },
  { name: 'get', path: '/messages/500', goal: 1.25, fastifyGoal: 3 },
  { name: 'patch', method: 'PATCH', path: '/messages/42', body: { text: 'patched text' }, goal: 1.25, fastifyGoal: 3 },
  { name: 'authenticated find', path: `/${SECURE_PATH}`, authenticated: true, goal: 2, fastifyGoal: 8 },
  { name: 'authenticated get', path: `/${SECURE_PATH}/500`, authenticated: true, goal: 2, fastifyGoal: 8 },
  {
    name: 'authenticated patch',
    method: 'PATCH',
    path: `/${SECURE_PATH}/42`,
    body: { text: 'patched text' },
    authenticated: true,
    goal: 1.5,
    fastifyGoal: 8
  },
  { name: 'create', method: 'POST', path: '/messages', body: message, goal: 1.25, fastifyGoal: 3 },
  {
    name: 'authenticated create',
    method: 'POST',
    path: `/${SECURE_PATH}`,
    body: message,
    authenticated: true,
    goal: 1.5,
    fastifyGoal: 8
  },
  // Last: requests autocannon abandons at the end of a round leave bcrypt work queued behind them.
  // Feathers hashes with bcryptjs on the main thread: 50 interleaved logins take seconds to finish at all.
  {
    name: 'login (bcrypt 10 + JWT)',
    method: 'POST',
    path: '/authentication',
    body: { strategy: 'local', ...BENCH_USER },
    duration: QUICK ? 3 : 10
  }
]

/** plumage on fastify must serve at least this share of raw fastify's requests on the same routes. */
const FASTIFY_FLOOR = 0.8

/** The REST targets, each its own process; the plumage rows' columns read them by name. */
const TARGETS = [
  ['plumage', './support/plumage-server.mjs', {}],
  ['feathers', './support/feathers-server.mjs', {}],
  ['express', './support/express-server.mjs', {}],
  ['fastify', './support/plumage-server.mjs', { HTTP: 'fastify' }],
  ['rawFastify', './support/fastify-server.mjs', {}]
] as const
type TargetName = (typeof TARGETS)[number][0]

interface Measured {
  requests: number
  p99: number
}

async function measure(
  target: Target,
  workload: Workload,
  seconds: number,
  headers: Record<string, string>
): Promise<Measured> {
  const result = await autocannon({
    url: target.url + workload.path,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 30,
    method: workload.method ?? 'GET',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: workload.body === undefined ? undefined : JSON.stringify(workload.body)
  })
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${target.name} / ${workload.name}: ${result.errors} errors, ${result.non2xx} non-2xx responses`)
  }
  await waitIdle(target.pid)
  // Completed requests over the elapsed time: per-second averages round badly in short runs.
  return { requests: result.requests.total / result.duration, p99: result.latency.p99 }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const info = machine()
const mark = (point: string) => {
  info.load[point] = loadavg()
}
const log = (text: string) => console.log(`${text}   [load ${loadText()}]`)

async function rest(targets: Target[]): Promise<{ rows: Row[]; idle: number[]; peak: number[] }> {
  const idle: number[] = []
  for (const target of targets) {
    await target.collectGarbage()
    idle.push(memoryOf(target.pid).rss)
  }
  const tokens = await Promise.all(targets.map((target) => bearerHeader(target.url)))
  const rows: Row[] = []
  for (const workload of workloads.filter((candidate) => selected(candidate.name))) {
    const headers = (index: number) => (workload.authenticated ? tokens[index]! : {})
    for (const [index, target] of targets.entries()) await measure(target, workload, WARMUP, headers(index))
    const runs: Measured[][] = targets.map(() => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (let turn = 0; turn < targets.length; turn++) {
        const index = (round + turn) % targets.length
        runs[index]!.push(await measure(targets[index]!, workload, workload.duration ?? DURATION, headers(index)))
      }
    }
    const rate = Object.fromEntries(
      TARGETS.map(([name], index) => [name, median(runs[index]!.map((run) => run.requests))])
    ) as Record<TargetName, number>
    const { goal, fastifyGoal } = workload
    rows.push({
      name: workload.name,
      unit: 'req/s',
      better: 'higher',
      plumage: rate.plumage,
      feathers: rate.feathers,
      express: rate.express,
      fastify: rate.fastify,
      rawFastify: rate.rawFastify,
      goal: goal ? `≥ ${goal}× Feathers` : undefined,
      met: goal ? (row) => row.plumage / row.feathers >= goal : undefined,
      fastifyGoal: `${fastifyGoal ? `≥ ${fastifyGoal}× Feathers, ` : ''}≥ ${FASTIFY_FLOOR}× raw fastify`,
      fastifyMet: (row) =>
        (!fastifyGoal || row.fastify! / row.feathers >= fastifyGoal) && row.fastify! / row.rawFastify! >= FASTIFY_FLOOR
    })
    log(
      `${workload.name}: ${TARGETS.map(([name]) => `${name} ${rate[name].toFixed(0)}`).join(', ')} req/s → ` +
        `${(rate.plumage / rate.feathers).toFixed(2)}× (express), ${(rate.fastify / rate.feathers).toFixed(2)}× (fastify) Feathers; ${(rate.fastify / rate.rawFastify).toFixed(2)}× raw fastify`
    )
  }
  return { rows, idle, peak: targets.map((target) => memoryOf(target.pid).peak) }
}

async function coldStarts(): Promise<{ plumage: ColdStart[]; feathers: ColdStart[] }> {
  const main = fileURLToPath(new URL('../plumage.mjs', import.meta.url))
  if (!existsSync(main)) throw new Error('dist/plumage.mjs is missing: run `npm run build` first (npm run bench does)')
  const anchor = fileURLToPath(new URL('./support/feathers-app-server.mjs', import.meta.url))
  const env = { NODE_ENV: 'production', AUTH_SECRET: BENCH_SECRET }
  const runs = { plumage: [] as ColdStart[], feathers: [] as ColdStart[] }
  for (let spawn = 0; spawn < SPAWNS; spawn++) {
    // Alternate who goes first, so disk cache and load drift favour neither.
    const order = spawn % 2 === 0 ? (['plumage', 'feathers'] as const) : (['feathers', 'plumage'] as const)
    for (const name of order) runs[name].push(await coldStart(name === 'plumage' ? main : anchor, env))
  }
  return runs
}

async function coldStartRows(): Promise<Row[]> {
  const cold = await coldStarts()
  const statuses = new Set([...cold.plumage, ...cold.feathers].map((run) => run.status))
  const ms = { plumage: median(cold.plumage.map((r) => r.ms)), feathers: median(cold.feathers.map((r) => r.ms)) }
  log(
    `cold start: plumage ${ms.plumage.toFixed(0)} ms, feathers ${ms.feathers.toFixed(0)} ms (first answers: ${[...statuses].join(', ')})`
  )
  return [
    {
      name: 'cold start (spawn → first answer)',
      unit: 'ms',
      better: 'lower',
      goal: '≤ 450 ms',
      plumage: ms.plumage,
      feathers: ms.feathers,
      met: (row) => row.plumage <= 450
    },
    {
      name: 'idle RSS, reference app after GC',
      unit: 'MB',
      better: 'lower',
      goal: '≤ 75 MB',
      plumage: median(cold.plumage.map((r) => r.idleRss)),
      feathers: median(cold.feathers.map((r) => r.idleRss)),
      met: (row) => row.plumage <= 75
    }
  ]
}

async function restRows(): Promise<Row[]> {
  const targets: Target[] = []
  try {
    for (const [name, script, env] of TARGETS) targets.push(await startTarget(name, script, env))
    const { rows, idle, peak } = await rest(targets)
    const byName = (values: number[]) =>
      Object.fromEntries(TARGETS.map(([name], index) => [name, values[index]!])) as Record<TargetName, number>
    const memory = (name: string, values: Record<TargetName, number>): Row => ({
      name,
      unit: 'MB',
      better: 'lower',
      ...values
    })
    rows.push(memory('idle RSS, bench server (1000 records) after GC', byName(idle)))
    if (rows.length > 1) rows.push(memory('peak RSS during the REST load', byName(peak)))
    return rows
  } finally {
    for (const target of targets) await target.stop()
  }
}

async function socketRows(): Promise<Row[]> {
  const { plumage, feathers } = await fanOut(SOCKET_ROUNDS)
  log(
    `socket: plumage ${plumage.eventsPerSecond.toFixed(0)} events/s p99 ${plumage.p99.toFixed(1)} ms, feathers ${feathers.eventsPerSecond.toFixed(0)} events/s p99 ${feathers.p99.toFixed(1)} ms`
  )
  return [
    {
      name: 'socket fan-out throughput (50 clients)',
      unit: 'events/s',
      better: 'higher',
      goal: '≥ 1× Feathers',
      plumage: plumage.eventsPerSecond,
      feathers: feathers.eventsPerSecond,
      met: (row) => row.plumage >= row.feathers
    },
    {
      name: 'socket fan-out p99 delivery',
      unit: 'ms',
      better: 'lower',
      goal: '≤ 0.8× Feathers',
      plumage: plumage.p99,
      feathers: feathers.p99,
      met: (row) => row.plumage <= 0.8 * row.feathers
    }
  ]
}

if (isMainThread) {
  const settings =
    `autocannon ${CONNECTIONS} connections, ${WARMUP} s warm-up, ${ROUNDS} × ${DURATION} s rounds interleaved (median; login ${QUICK ? 3 : 10} s); ` +
    `socket: 50 clients × 500 creates, median of ${SOCKET_ROUNDS}; cold start: median of ${SPAWNS} spawns${QUICK ? ' (BENCH_QUICK)' : ''}.`
  console.log(`npm run bench${QUICK ? ' (quick)' : ''}: ${info.cores} × ${info.cpus}, Node ${info.node}\n${settings}\n`)
  mark('start')
  const rows: Row[] = []
  const sections: [name: string, run: () => Promise<Row[]>][] = [
    ['REST', restRows],
    ['socket', socketRows],
    ['cold start', coldStartRows]
  ]
  for (const [name, run] of sections) {
    if (ONLY && !ONLY.test(name) && !(name === 'REST' && workloads.some((workload) => selected(workload.name))))
      continue
    log(`${name}…`)
    rows.push(...(await run()))
    mark(name)
  }
  mark('end')
  console.log(`\n${markdown(rows, info, settings)}\n`)
  if (!ONLY) console.log(`written: ${save(rows, info, settings, { quick: QUICK }).join(', ')}`)
  const missed = [
    ...rows.filter((row) => row.met && !row.met(row)).map((row) => row.name),
    ...rows.filter((row) => row.fastifyMet && !row.fastifyMet(row)).map((row) => `${row.name} (fastify)`)
  ]
  if (missed.length > 0) console.log(`goals missed: ${missed.join('; ')}`)
  process.exit(0)
}
