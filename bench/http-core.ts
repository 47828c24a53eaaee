/**
 * `npm run bench:http-core`: plumage's HTTP core against the raw engine it runs on, in one run (issue 25:
 * ≥ 0.8× raw fastify on find, get, create and patch, and ≥ 0.8× raw express on the express engine).
 *
 * Four servers, each its own process (bench/support/*-server.ts, 1000 seeded messages, the same routes and
 * the same JSON): plumage with HTTP=express and with HTTP=fastify (the reference `messages` service:
 * hooks, schema validation, pagination), raw express and raw fastify (bench/support/baseline.ts: a Map
 * and no framework). Per workload: a warm-up per server, then ROUNDS rounds of autocannon (50
 * connections) rotating which server goes first; the median round counts. Besides requests/second
 * (what the goal is on), the servers' CPU time per request (from /proc, µs) is printed: autocannon
 * shares the machine, and CPU per request moves less with the load.
 *
 * BENCH_DURATION: seconds per round (default 1.5); BENCH_ROUNDS (default 3). About 100 s with the defaults.
 * BENCH_ONLY=<regexp>: only the workloads and engines it matches (e.g. 'patch|get', 'fastify'), for quick checks.
 * BENCH_PROFILE=1: the plumage servers run under `node --cpu-prof` (profiles in dist/bench/profiles,
 * summarize them with bench/summarize-profile.mjs).
 */
import autocannon from 'autocannon'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { loadText } from './support/report.js'
import { cpuTicks, startTarget, waitIdle, type Target } from './support/servers.js'
import { MESSAGE_REQUESTS } from './support/message-requests.js'

const DURATION = Number(process.env.BENCH_DURATION ?? 1.5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const WARMUP = 0.5
const CONNECTIONS = 50
const GOAL = 0.8
const PROFILE = process.env.BENCH_PROFILE === '1'
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY, 'i') : undefined
const profiles = fileURLToPath(new URL('./profiles', import.meta.url))

interface Workload {
  name: string
  method?: 'GET' | 'POST' | 'PATCH'
  path: string
  body?: unknown
}

// Reads first, creates last: every create grows the collection the finds read.
const workloads: Workload[] = [{ name: 'find', path: '/messages' }, ...MESSAGE_REQUESTS]

/** Each plumage server and the raw server of its engine. */
const engines = [
  { engine: 'express', plumage: { HTTP: 'express' }, raw: './support/express-server.mjs' },
  { engine: 'fastify', plumage: { HTTP: 'fastify' }, raw: './support/fastify-server.mjs' }
] as const
const pairs = engines.filter(
  (pair) => !ONLY || ONLY.test(pair.engine) || !engines.some((each) => ONLY.test(each.engine))
)
const selected = workloads.filter(
  (workload) => !ONLY || ONLY.test(workload.name) || !workloads.some((each) => ONLY.test(each.name))
)

interface Measured {
  rate: number
  /** Server CPU time per request, µs. */
  cpu: number
}

async function measure(target: Target, workload: Workload, seconds: number): Promise<Measured> {
  const before = cpuTicks(target.pid)
  const result = await autocannon({
    url: target.url + workload.path,
    connections: CONNECTIONS,
    duration: seconds,
    method: workload.method ?? 'GET',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: workload.body === undefined ? undefined : JSON.stringify(workload.body)
  })
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${target.name} / ${workload.name}: ${result.errors} errors, ${result.non2xx} non-2xx responses`)
  }
  const cpu = ((cpuTicks(target.pid) - before) * 10_000) / result.requests.total
  // Requests autocannon abandoned at the end of the round must not take CPU from the next server.
  await waitIdle(target.pid, 5_000)
  return { rate: result.requests.total / result.duration, cpu }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const profileArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []
const targets: Target[] = []
try {
  for (const pair of pairs) {
    targets.push(
      await startTarget(`plumage (${pair.engine})`, './support/plumage-server.mjs', pair.plumage, profileArgs)
    )
    targets.push(await startTarget(`raw ${pair.engine}`, pair.raw))
  }
  console.log(
    `HTTP core: plumage vs the raw engine, autocannon ${CONNECTIONS} connections, ${WARMUP} s warm-up, ` +
      `${ROUNDS} × ${DURATION} s rounds rotating (median)   [load ${loadText()}]\n`
  )
  const rows = [
    ['workload', 'engine', 'plumage req/s', 'raw req/s', 'ratio', 'plumage µs CPU/req', 'raw µs CPU/req', 'CPU ratio']
  ]
  const missed: string[] = []
  for (const workload of selected) {
    for (const target of targets) await measure(target, workload, WARMUP)
    const runs: Measured[][] = targets.map(() => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (let turn = 0; turn < targets.length; turn++) {
        const index = (round + turn) % targets.length
        runs[index]!.push(await measure(targets[index]!, workload, DURATION))
      }
    }
    for (const [index, pair] of pairs.entries()) {
      const [ours, raw] = [runs[2 * index]!, runs[2 * index + 1]!]
      const rate = [median(ours.map((run) => run.rate)), median(raw.map((run) => run.rate))] as const
      const cpu = [median(ours.map((run) => run.cpu)), median(raw.map((run) => run.cpu))] as const
      const ratio = rate[0] / rate[1]
      if (ratio < GOAL) missed.push(`${workload.name} (${pair.engine})`)
      rows.push([
        workload.name,
        pair.engine,
        rate[0].toFixed(0),
        rate[1].toFixed(0),
        `${ratio.toFixed(2)}×`,
        cpu[0].toFixed(1),
        cpu[1].toFixed(1),
        `${(cpu[1] / cpu[0]).toFixed(2)}×`
      ])
      console.log(
        `${workload.name} on ${pair.engine}: ${ratio.toFixed(2)}× raw req/s (${rate[0].toFixed(0)} vs ` +
          `${rate[1].toFixed(0)}), ${(cpu[1] / cpu[0]).toFixed(2)}× raw CPU/request   [load ${loadText()}]`
      )
    }
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  const line = (row: string[]) => '| ' + row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ') + ' |'
  console.log(
    `\n${line(rows[0]!)}\n|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|\n` +
      rows.slice(1).map(line).join('\n')
  )
  console.log(
    `\nratio: plumage ÷ raw requests/second (goal ≥ ${GOAL}×); CPU ratio: raw ÷ plumage CPU per request (higher ` +
      `is better for plumage). Load average (1/5/15 min) at the end: ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' / ')}`
  )
  console.log(missed.length ? `goal missed: ${missed.join(', ')}` : `goal met on every row`)
} finally {
  // SIGTERM: a profiled server exits normally and writes its profile.
  for (const target of targets) await target.stop(PROFILE ? 'SIGTERM' : 'SIGKILL')
}
