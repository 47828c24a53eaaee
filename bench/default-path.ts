/**
 * `npm run bench:default-path` (issue 36: "the request path pays only for what is on"): the server `npm start` runs
 * today (dist/plumage.mjs, every setting at its default: metrics, sessions, idempotency, live queries and recovery
 * on) against the build of commit 0baaba0 (2026-11-24, before metrics, tracing and recovery joined the kernel), both
 * with HTTP=fastify on the memory store, each in its own process. One user signs up and logs in on each; the
 * workloads are that user's JWT-authenticated find, get, patch and create (last: it grows the store) of `messages`.
 * Rounds interleaved (the order flipped every round), autocannon with 50 connections; reported per workload: the
 * median of the rounds' requests per second and of the server's CPU time per request (from /proc, less sensitive
 * to a busy machine), today ÷ 0baaba0 (goal: at least as fast, i.e. req/s ratio ≥ 1 and CPU ratio ≤ 1).
 *
 * The baseline is a build of that commit: `git worktree add --detach /tmp/plumage-0baaba0 0baaba0`, then in it
 * `ln -s "$PWD/node_modules" node_modules` (or `npm ci`) and `node scripts/build-server.mjs`. BASELINE_DIR names
 * another folder. With this checkout's node_modules both builds run the same versions of the packages, so the
 * ratios compare plumage's own code. BENCH_ROUNDS (default 6) and BENCH_DURATION (seconds per measurement,
 * default 3) bound it.
 */
import autocannon from 'autocannon'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BENCH_USER } from './support/auth-setup.js'
import { printTable, writeResults } from './support/measure.js'
import { spawnPlumage } from './support/plumage-process.js'
import { killChildren, stopChild } from './support/processes.js'
import { loadText } from './support/report.js'
import { cpuTicks } from './support/servers.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const SECONDS = Number(process.env.BENCH_DURATION ?? 3)
const root = fileURLToPath(new URL('../..', import.meta.url))
const baselineDir = process.env.BASELINE_DIR ?? '/tmp/plumage-0baaba0'
const ENV = { HTTP: 'fastify', STORE: 'memory' }

interface Server {
  name: string
  url: string
  pid: number
  headers: Record<string, string>
  /** The id of a message of the user's own, read and patched by the workloads. */
  id: string
}

interface Workload {
  name: string
  method: 'GET' | 'PATCH' | 'POST'
  path: (server: Server) => string
  body?: unknown
}

const workloads: Workload[] = [
  { name: 'find (JWT)', method: 'GET', path: () => '/messages' },
  { name: 'get (JWT)', method: 'GET', path: (server) => `/messages/${server.id}` },
  { name: 'patch (JWT)', method: 'PATCH', path: (server) => `/messages/${server.id}`, body: { text: 'patched text' } },
  { name: 'create (JWT)', method: 'POST', path: () => '/messages', body: { text: 'a new message' } }
]

async function start(name: string, main: string): Promise<Server & { stop(): Promise<void> }> {
  const { child, value: url } = await spawnPlumage(name, main, ENV)
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(url + path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body)
    })
    if (!response.ok)
      throw new Error(`${name}: ${method} ${path} answered ${response.status}: ${await response.text()}`)
    return (await response.json()) as Record<string, unknown>
  }
  await call('POST', '/users', BENCH_USER)
  const { accessToken } = await call('POST', '/authentication', { strategy: 'local', ...BENCH_USER })
  const headers = { authorization: `Bearer ${String(accessToken)}` }
  let id = ''
  for (let index = 0; index < 50; index++)
    id = String((await call('POST', '/messages', { text: `message ${index}` }, headers)).id)
  return { name, url, pid: child.pid!, headers, id, stop: () => stopChild(child) }
}

async function measure(server: Server, workload: Workload, seconds: number): Promise<{ rate: number; cpu: number }> {
  const before = cpuTicks(server.pid)
  const result = await autocannon({
    url: server.url + workload.path(server),
    connections: 50,
    duration: seconds,
    method: workload.method,
    headers: { 'content-type': 'application/json', accept: 'application/json', ...server.headers },
    body: workload.body === undefined ? undefined : JSON.stringify(workload.body)
  })
  if (result.errors > 0 || result.non2xx > 0)
    throw new Error(`${server.name} / ${workload.name}: ${result.errors} errors, ${result.non2xx} non-2xx responses`)
  return { rate: result.requests.average, cpu: ((cpuTicks(server.pid) - before) * 10_000) / result.requests.total }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length / 2
  return sorted.length % 2 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const baseline = join(baselineDir, 'dist', 'plumage.mjs')
if (!existsSync(baseline)) {
  console.error(
    `No build of 0baaba0 at ${baseline}: git worktree add --detach ${baselineDir} 0baaba0, link or install its ` +
      'node_modules, and run node scripts/build-server.mjs there (or set BASELINE_DIR).'
  )
  process.exit(1)
}
console.log(
  `default path: today's npm start (HTTP=fastify, defaults) vs the build of 0baaba0, ${ROUNDS} interleaved rounds ` +
    `of ${SECONDS}s   [load ${loadText()}]`
)
try {
  const today = await start('today', join(root, 'dist', 'plumage.mjs'))
  const before = await start('0baaba0', baseline)
  const servers = [today, before]
  for (const server of servers) for (const workload of workloads) await measure(server, workload, 1)
  const rows = []
  for (const workload of workloads) {
    const results = new Map<Server, { rate: number; cpu: number }[]>(servers.map((server) => [server, []]))
    for (let round = 0; round < ROUNDS; round++)
      for (const server of round % 2 ? [...servers].reverse() : servers)
        results.get(server)!.push(await measure(server, workload, SECONDS))
    const [now, then] = [results.get(today)!, results.get(before)!]
    const ratios = now.map((run, index) => run.rate / then[index]!.rate)
    const row = {
      workload: workload.name,
      '0baaba0 req/s': median(then.map((run) => run.rate)),
      'today req/s': median(now.map((run) => run.rate)),
      'req/s ratio': median(now.map((run) => run.rate)) / median(then.map((run) => run.rate)),
      'rounds ratio': `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`,
      '0baaba0 CPU µs/req': median(then.map((run) => run.cpu)),
      'today CPU µs/req': median(now.map((run) => run.cpu)),
      'CPU ratio': median(now.map((run) => run.cpu)) / median(then.map((run) => run.cpu))
    }
    rows.push(row)
    console.log(
      `${workload.name}: ${row['req/s ratio'].toFixed(3)}x req/s (rounds ${row['rounds ratio']}), ` +
        `${row['CPU ratio'].toFixed(3)}x CPU per request`
    )
  }
  printTable('today ÷ 0baaba0 (medians of the rounds; goal: req/s ratio ≥ 1, CPU ratio ≤ 1)', rows)
  writeResults('default-path', rows)
  console.log(`\nload at the end: ${loadText()}`)
  await Promise.all(servers.map((server) => server.stop()))
} finally {
  killChildren()
}
