/**
 * `npm run bench:http-core`: plumage's HTTP core against the raw engine it runs on (issue 25: ≥ 0.8× raw fastify on
 * find, get, create and patch, and ≥ 0.8× raw express on the express engine).
 *
 * Four servers (bench/support/*-server.ts, 1000 seeded messages, the same routes and the same JSON): plumage with
 * HTTP=express and with HTTP=fastify (the reference `messages` service: hooks, schema validation, pagination), raw
 * express and raw fastify (bench/support/baseline.ts: a Map and no framework). Per workload and engine, ROUNDS
 * rounds; each round starts a **fresh process** of plumage and one of the raw server, one after the other (plumage
 * first in even rounds, raw first in odd ones), and runs autocannon (50 connections) against each alone: a warm-up,
 * then the measured DURATION. A fresh process per round, because with one long-lived process per server the same
 * code gave ratios from 0.37× to 0.97× from one run to the next (the process ran fast or slow for its whole life):
 * a round is one draw, and the median of several draws, with their spread, says where the code is.
 *
 * The deciding figure is the servers' CPU time per request (the server's own `process.cpuUsage()`, all its
 * threads, over the measured window): autocannon shares the two cores, so requests/second also measure how much
 * CPU the client left to the server. Each row prints medians, the spread (min–max) of the per-round ratios, and
 * the verdict on the CPU ratio (raw CPU per request ÷ plumage's); the requests/second ratio is printed beside it.
 *
 * BENCH_DURATION: seconds per measured window (default 2); BENCH_WARMUP (default 2: long enough for V8 to have
 * optimized the hot path, which a fresh process has not); BENCH_ROUNDS (default 5). About 7 minutes with the
 * defaults, half with BENCH_ONLY=fastify.
 * BENCH_ONLY=<regexp>: only the workloads and engines it matches (e.g. 'patch|get', 'fastify'), for quick checks.
 * BENCH_PROFILE=1: the plumage servers run under `node --cpu-prof` (profiles in dist/bench/profiles, one per round,
 * summarize them with bench/summarize-profile.mjs).
 */
import autocannon from 'autocannon'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { loadText } from './support/report.js'
import { startTarget, type Target } from './support/servers.js'
import { MESSAGE_REQUESTS } from './support/message-requests.js'

const DURATION = Number(process.env.BENCH_DURATION ?? 2)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
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
  const before = await target.cpuUsage()
  const result = await autocannon({
    url: target.url + workload.path,
    connections: CONNECTIONS,
    duration: seconds,
    method: workload.method ?? 'GET',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: workload.body === undefined ? undefined : JSON.stringify(workload.body)
  })
  const cpu = ((await target.cpuUsage()) - before) / result.requests.total
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${target.name} / ${workload.name}: ${result.errors} errors, ${result.non2xx} non-2xx responses`)
  }
  return { rate: result.requests.total / result.duration, cpu }
}

/** A fresh server process: warmed up on the workload, measured, stopped. */
async function round(name: string, script: string, env: Record<string, string>, workload: Workload) {
  const target = await startTarget(name, script, env, name.startsWith('plumage') ? profileArgs : [])
  try {
    await measure(target, workload, WARMUP)
    return await measure(target, workload, DURATION)
  } finally {
    // SIGTERM: a profiled server exits normally and writes its profile.
    await target.stop(PROFILE ? 'SIGTERM' : 'SIGKILL')
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length / 2
  return sorted.length % 2 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
const spread = (values: number[], digits = 2) =>
  `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`

const profileArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []
console.log(
  `HTTP core: plumage vs the raw engine, autocannon ${CONNECTIONS} connections; per row ${ROUNDS} rounds of a fresh ` +
    `process each, ${WARMUP} s warm-up + ${DURATION} s measured, alternating which goes first (medians)   ` +
    `[load ${loadText()}]\n`
)
const rows = [
  [
    'workload',
    'engine',
    'plumage req/s',
    'raw req/s',
    'ratio (rounds)',
    'plumage µs CPU/req',
    'raw µs CPU/req',
    'CPU ratio (rounds)'
  ]
]
const missed: string[] = []
for (const workload of selected) {
  for (const pair of pairs) {
    const ours: Measured[] = []
    const raw: Measured[] = []
    for (let index = 0; index < ROUNDS; index++) {
      const plumageRun = () => round(`plumage (${pair.engine})`, './support/plumage-server.mjs', pair.plumage, workload)
      const rawRun = () => round(`raw ${pair.engine}`, pair.raw, {}, workload)
      if (index % 2 === 0) {
        ours.push(await plumageRun())
        raw.push(await rawRun())
      } else {
        raw.push(await rawRun())
        ours.push(await plumageRun())
      }
    }
    const rateRatios = ours.map((run, index) => run.rate / raw[index]!.rate)
    const cpuRatios = ours.map((run, index) => raw[index]!.cpu / run.cpu)
    const rate = [median(ours.map((run) => run.rate)), median(raw.map((run) => run.rate))] as const
    const cpu = [median(ours.map((run) => run.cpu)), median(raw.map((run) => run.cpu))] as const
    const cpuRatio = cpu[1] / cpu[0]
    if (cpuRatio < GOAL) missed.push(`${workload.name} (${pair.engine})`)
    rows.push([
      workload.name,
      pair.engine,
      rate[0].toFixed(0),
      rate[1].toFixed(0),
      `${(rate[0] / rate[1]).toFixed(2)}× (${spread(rateRatios)})`,
      `${cpu[0].toFixed(1)} (${spread(
        ours.map((run) => run.cpu),
        1
      )})`,
      `${cpu[1].toFixed(1)} (${spread(
        raw.map((run) => run.cpu),
        1
      )})`,
      `${cpuRatio.toFixed(2)}× (${spread(cpuRatios)})`
    ])
    console.log(
      `${workload.name} on ${pair.engine}: ${cpuRatio.toFixed(2)}× raw CPU/request (${cpu[0].toFixed(1)} vs ` +
        `${cpu[1].toFixed(1)} µs; rounds ${spread(cpuRatios)}), ${(rate[0] / rate[1]).toFixed(2)}× raw req/s   ` +
        `[load ${loadText()}]`
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
  `\nratio: plumage ÷ raw requests/second; CPU ratio: raw ÷ plumage CPU per request (higher is better for plumage; ` +
    `the goal, ≥ ${GOAL}×, is judged on it, median of the rounds). Load average (1/5/15 min) at the end: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' / ')}`
)
console.log(missed.length ? `goal missed: ${missed.join(', ')}` : `goal met on every row`)
