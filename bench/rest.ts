import autocannon from 'autocannon'
import { bearerHeader, SECURE_PATH } from './support/auth-setup.js'
import { startTarget, type Target } from './support/servers.js'

/**
 * `npm run bench:rest`: plumage against @feathersjs/express + @feathersjs/memory (the anchor), both
 * seeded with the same 1000 messages, each in its own process, measured in the same run with
 * autocannon (50 connections over loopback). Prints requests/second and plumage/Feathers ratios.
 * BENCH_DURATION (seconds, default 5) bounds each measurement.
 */
export interface Workload {
  name: string
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  body?: unknown
  /** Per-target preparation, e.g. logging in to get an Authorization header for protected workloads. */
  headers?: (target: Target) => Promise<Record<string, string>> | Record<string, string>
}

/** Adding a workload is one entry here. */
export const workloads: Workload[] = [
  { name: 'find (page of 10)', path: '/messages' },
  {
    name: 'filtered + sorted find',
    path: '/messages?room=general&user[$in][0]=user3&user[$in][1]=user6&user[$in][2]=user9&stars[$ne]=7&$sort[text]=-1&$limit=5'
  },
  { name: 'get', path: '/messages/500' },
  { name: 'patch', method: 'PATCH', path: '/messages/42', body: { text: 'patched text' } },
  { name: 'create', method: 'POST', path: '/messages', body: { text: 'a new message', user: 'user1', room: 'random', stars: '3' } },
  // Same service behind authenticate('jwt'): token verification and entity lookup on every call.
  { name: 'authenticated find', path: `/${SECURE_PATH}`, headers: (target) => bearerHeader(target.url) },
  { name: 'authenticated get', path: `/${SECURE_PATH}/500`, headers: (target) => bearerHeader(target.url) }
]

const duration = Number(process.env.BENCH_DURATION ?? 5)
const connections = 50

async function measure(target: Target, workload: Workload, seconds: number): Promise<number> {
  const headers = { 'content-type': 'application/json', accept: 'application/json', ...(await workload.headers?.(target)) }
  const result = await autocannon({
    url: target.url + workload.path,
    connections,
    duration: seconds,
    method: workload.method ?? 'GET',
    headers,
    body: workload.body === undefined ? undefined : JSON.stringify(workload.body)
  })
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${target.name} / ${workload.name}: ${result.errors} errors, ${result.non2xx} non-2xx responses`)
  }
  return result.requests.average
}

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
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  console.log('\n' + rows.map((row) => '| ' + row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ') + ' |').join('\n'))
} finally {
  await plumage.stop()
  await anchor.stop()
}
