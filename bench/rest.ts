import autocannon from 'autocannon'
import { bearerHeader, SECURE_PATH } from './support/auth-setup.js'
import { cpuTicks, startTarget, type Target } from './support/servers.js'
import { MESSAGE_REQUESTS } from './support/message-requests.js'

/**
 * `npm run bench:rest`: plumage against @feathersjs/express + @feathersjs/memory (the anchor), both
 * seeded with the same 1000 messages, each in its own process, measured in the same run with
 * autocannon (50 connections over loopback). Prints requests/second and plumage/Feathers ratios.
 * Then the cost of metrics: plumage with METRICS=true against METRICS=false, two processes in the
 * same run, rounds interleaved (the median counts), on the workloads that touch every measurement.
 * Then resolvers: a find of 25 messages with each author populated through the per-call loader against the same
 * find unpopulated, and against one `users.get` per message (what a Feathers resolver does), with the users' store
 * reads per request (support/resolvers-server.ts).
 * Then idempotency keys: a keyed create against an unkeyed one (issue 40: ≤ 1.1× the time).
 * BENCH_DURATION (seconds, default 5) bounds each measurement; BENCH_ONLY=metrics, resolvers or idempotency runs only
 * that part.
 */
export interface Workload {
  name: string
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  body?: unknown
  /** Per-target preparation, e.g. logging in to get an Authorization header for protected workloads. */
  headers?: (target: Target) => Promise<Record<string, string>> | Record<string, string>
  /**
   * Each request with a header of its own, built by autocannon per request: an Idempotency-Key never sent before
   * (`key`, a first write every time), or an `X-Request-Id` (`id`: the same client-side cost, no key).
   */
  perRequest?: 'key' | 'id'
}

/** Adding a workload is one entry here. */
export const workloads: Workload[] = [
  { name: 'find (page of 10)', path: '/messages' },
  {
    name: 'filtered + sorted find',
    path: '/messages?room=general&user[$in][0]=user3&user[$in][1]=user6&user[$in][2]=user9&stars[$ne]=7&$sort[text]=-1&$limit=5'
  },
  ...MESSAGE_REQUESTS,
  // Same service behind authenticate('jwt'): token verification and entity lookup on every call.
  { name: 'authenticated find', path: `/${SECURE_PATH}`, headers: (target) => bearerHeader(target.url) },
  { name: 'authenticated get', path: `/${SECURE_PATH}/500`, headers: (target) => bearerHeader(target.url) }
]

const duration = Number(process.env.BENCH_DURATION ?? 5)
const connections = 50
const only = process.env.BENCH_ONLY
/** The workloads of the metrics row: each records a request, a service call and a store query; writes also publish. */
const METRICS_WORKLOADS = ['find (page of 10)', 'get', 'patch', 'create']
/** Many short rounds, alternating: a busy machine's drift hits both servers alike. */
const METRICS_ROUNDS = 8
const metricsSeconds = Math.max(1, Math.round(duration / 2))

async function measure(target: Target, workload: Workload, seconds: number): Promise<number> {
  return (await measured(target, workload, seconds)).rate
}

/** Requests per second, and the server's CPU time per request (µs, from /proc: less sensitive to a busy machine). */
async function measured(
  target: Target,
  workload: Workload,
  seconds: number
): Promise<{ rate: number; cpu: number; total: number }> {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json',
    ...(await workload.headers?.(target))
  }
  const before = cpuTicks(target.pid)
  const result = await autocannon({
    url: target.url + workload.path,
    connections,
    duration: seconds,
    method: workload.method ?? 'GET',
    headers,
    body: workload.body === undefined ? undefined : JSON.stringify(workload.body),
    ...(workload.perRequest ? { requests: [{ setupRequest: withHeader(workload.perRequest) }] } : {})
  })
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${target.name} / ${workload.name}: ${result.errors} errors, ${result.non2xx} non-2xx responses`)
  }
  const ticks = cpuTicks(target.pid) - before
  return { rate: result.requests.average, cpu: (ticks * 10_000) / result.requests.total, total: result.requests.total }
}

let keys = 0
const run = Math.random().toString(36).slice(2, 8)
/** Gives each request an Idempotency-Key never sent before, or an X-Request-Id (the same work for autocannon). */
function withHeader(kind: 'key' | 'id') {
  const name = kind === 'key' ? 'idempotency-key' : 'x-request-id'
  return <R extends { path: string; headers?: Record<string, string> }>(request: R): R => ({
    ...request,
    headers: { ...request.headers, [name]: `"${run}-${++keys}"` }
  })
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) => '| ' + row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ') + ' |').join('\n')
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

async function versusFeathers(): Promise<void> {
  const plumage = await startTarget('plumage', './support/plumage-server.mjs')
  const anchor = await startTarget('feathers', './support/feathers-server.mjs')
  try {
    console.log(`autocannon: ${connections} connections, ${duration}s per measurement, 1000 seeded records\n`)
    const rows: string[][] = [['workload', 'plumage req/s', 'feathers req/s', 'ratio']]
    for (const workload of workloads) {
      // A short warm-up lets both JITs settle before the measured run.
      await measure(plumage, workload, 1)
      await measure(anchor, workload, 1)
      const ours = await measure(plumage, workload, duration)
      const theirs = await measure(anchor, workload, duration)
      rows.push([workload.name, ours.toFixed(0), theirs.toFixed(0), `${(ours / theirs).toFixed(2)}x`])
      console.log(`${workload.name}: ${(ours / theirs).toFixed(2)}x`)
    }
    console.log('\n' + table(rows))
  } finally {
    await plumage.stop()
    await anchor.stop()
  }
}

/** Metrics on ÷ metrics off, same server code, same run (issue 22: within 5 %, i.e. a ratio ≥ 0.95). */
async function metricsCost(): Promise<void> {
  const off = await startTarget('metrics off', './support/plumage-server.mjs', { METRICS: 'false' })
  const on = await startTarget('metrics on', './support/plumage-server.mjs', { METRICS: 'true' })
  try {
    console.log(
      `\nmetrics: METRICS=true vs METRICS=false, ${METRICS_ROUNDS} interleaved rounds of ${metricsSeconds}s, medians\n`
    )
    const rows: string[][] = [
      ['workload', 'METRICS=false req/s', 'METRICS=true req/s', 'ratio', 'CPU µs/req off', 'CPU µs/req on', 'CPU ratio']
    ]
    for (const workload of workloads.filter((each) => METRICS_WORKLOADS.includes(each.name))) {
      await measure(off, workload, 1)
      await measure(on, workload, 1)
      const offRounds: { rate: number; cpu: number }[] = []
      const onRounds: { rate: number; cpu: number }[] = []
      for (let round = 0; round < METRICS_ROUNDS; round++) {
        // Who goes first alternates, so neither always follows the other's garbage.
        const order = round % 2 === 0 ? [off, on] : [on, off]
        for (const target of order)
          (target === off ? offRounds : onRounds).push(await measured(target, workload, metricsSeconds))
      }
      const [without, withMetrics] = [
        median(offRounds.map(({ rate }) => rate)),
        median(onRounds.map(({ rate }) => rate))
      ]
      const [cpuOff, cpuOn] = [median(offRounds.map(({ cpu }) => cpu)), median(onRounds.map(({ cpu }) => cpu))]
      rows.push([
        `metrics: ${workload.name}`,
        without.toFixed(0),
        withMetrics.toFixed(0),
        `${(withMetrics / without).toFixed(3)}x`,
        cpuOff.toFixed(0),
        cpuOn.toFixed(0),
        `${(cpuOn / cpuOff).toFixed(3)}x`
      ])
      console.log(
        `metrics: ${workload.name}: ${(withMetrics / without).toFixed(3)}x req/s, ${(cpuOn / cpuOff).toFixed(3)}x CPU per request`
      )
    }
    console.log('\n' + table(rows))
  } finally {
    await off.stop()
    await on.stop()
  }
}

/** The find of 25 messages three ways (resolvers-server.ts): as stored, populated by the loader, a get per message. */
const RESOLVER_WORKLOADS: Workload[] = [
  { name: 'find 25 messages', path: '/messages?$limit=25' },
  { name: 'find 25 messages, users populated (loader)', path: '/populated?$limit=25' },
  { name: 'find 25 messages, users populated (get per message)', path: '/per-record?$limit=25' }
]

/** Resolver cost: interleaved rounds (medians) of the three finds, and the users' store reads each request made. */
async function resolverCost(): Promise<void> {
  const target = await startTarget('resolvers', './support/resolvers-server.mjs')
  const reads = async () => ((await (await fetch(`${target.url}/reads`)).json()) as { users: number }).users
  try {
    console.log(`\nresolvers: ${METRICS_ROUNDS} interleaved rounds of ${metricsSeconds}s, medians\n`)
    const rounds = RESOLVER_WORKLOADS.map(() => ({ rates: [] as number[], cpus: [] as number[], reads: 0, total: 0 }))
    for (const workload of RESOLVER_WORKLOADS) await measure(target, workload, 1)
    for (let round = 0; round < METRICS_ROUNDS; round++) {
      for (const [index, workload] of RESOLVER_WORKLOADS.entries()) {
        const before = await reads()
        const { rate, cpu, total } = await measured(target, workload, metricsSeconds)
        const into = rounds[index]!
        into.rates.push(rate)
        into.cpus.push(cpu)
        into.reads += (await reads()) - before
        into.total += total
      }
    }
    const base = median(rounds[0]!.rates)
    const rows: string[][] = [['workload', 'req/s', 'time vs unpopulated', 'CPU µs/req', 'users reads/request']]
    for (const [index, workload] of RESOLVER_WORKLOADS.entries()) {
      const { rates, cpus, reads: count, total } = rounds[index]!
      const rate = median(rates)
      rows.push([
        workload.name,
        rate.toFixed(0),
        `${(base / rate).toFixed(2)}x`,
        median(cpus).toFixed(0),
        (count / total).toFixed(2)
      ])
    }
    console.log(table(rows))
  } finally {
    await target.stop()
  }
}

/**
 * Issue 40: a keyed create against an unkeyed one on the same server (IDEMPOTENCY=true), and the unkeyed create on a
 * server without the idempotency module, interleaved rounds (medians) in one run. Goal: keyed ≤ 1.1× the time.
 */
async function idempotencyCost(): Promise<void> {
  const on = await startTarget('idempotency on', './support/plumage-server.mjs', { IDEMPOTENCY: 'true' })
  const off = await startTarget('idempotency off', './support/plumage-server.mjs', { IDEMPOTENCY: 'false' })
  const create = workloads.find((workload) => workload.name === 'create')!
  const runs: [string, Target, Workload][] = [
    ['create, no module', off, { ...create, perRequest: 'id' }],
    ['create, no key', on, { ...create, perRequest: 'id' }],
    ['create, keyed', on, { ...create, name: 'create, keyed', perRequest: 'key' }]
  ]
  try {
    console.log(`
idempotency keys: ${METRICS_ROUNDS} interleaved rounds of ${metricsSeconds}s, medians
`)
    for (const [, target, workload] of runs) await measure(target, workload, 1)
    const rounds = runs.map(() => ({ rates: [] as number[], cpus: [] as number[] }))
    for (let round = 0; round < METRICS_ROUNDS; round++) {
      // Who goes first turns, so that none always follows another's garbage.
      for (let turn = 0; turn < runs.length; turn++) {
        const index = (round + turn) % runs.length
        const [, target, workload] = runs[index]!
        const { rate, cpu } = await measured(target, workload, metricsSeconds)
        rounds[index]!.rates.push(rate)
        rounds[index]!.cpus.push(cpu)
      }
    }
    const unkeyed = median(rounds[1]!.rates)
    const unkeyedCpu = median(rounds[1]!.cpus)
    const rows: string[][] = [['workload', 'req/s', 'time vs unkeyed', 'server CPU µs/req', 'CPU vs unkeyed']]
    for (const [index, [name]] of runs.entries()) {
      const [rate, cpu] = [median(rounds[index]!.rates), median(rounds[index]!.cpus)]
      rows.push([
        name,
        rate.toFixed(0),
        `${(unkeyed / rate).toFixed(3)}x`,
        cpu.toFixed(0),
        `${(cpu / unkeyedCpu).toFixed(3)}x`
      ])
    }
    console.log(table(rows))
  } finally {
    await on.stop()
    await off.stop()
  }
}

if (only === undefined) await versusFeathers()
if (only === undefined || only === 'metrics') await metricsCost()
if (only === undefined || only === 'resolvers') await resolverCost()
if (only === undefined || only === 'idempotency') await idempotencyCost()
