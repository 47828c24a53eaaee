import autocannon from 'autocannon'
import { existsSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import type { R, RDatum } from 'rethinkdb-ts'
import { BENCH_USER, bearerHeader } from './auth-setup.js'
import { jsonCall, median } from './measure.js'
import { spawnPlumage } from './plumage-process.js'
import { killChildren, startChild, stopChild, type Started } from './processes.js'

/**
 * The end-to-end write row of `npm run bench:rethinkdb`: the reference app's `POST /messages` (the built
 * server, `node dist/plumage.mjs`, HTTP=fastify STORE=rethinkdb, behind a JWT: authentication, validation,
 * the author and timestamps, the `user` resolver, the store's create with its event in the log) against
 * rethinkdb-bare-server.ts (node:http, one durable insert per request, the same pool settings), on the same
 * RethinkDB server, each in a database of its own. For 1 and 16 connections, BENCH_E2E_ROUNDS rounds (5)
 * alternate who goes first; each side gets a 1 s warm-up, then BENCH_DURATION seconds (3) of autocannon.
 * Per request it reads the CPU time of the node server (/proc/<pid>/stat) and, when `rethinkdbPid` is known
 * (the bench started the server: RETHINKDB_BIN), of RethinkDB, and the queries RethinkDB ran
 * (`rethinkdb.stats`, the server's queries_total): load-independent measures on a shared machine.
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 3)
const ROUNDS = Number(process.env.BENCH_E2E_ROUNDS ?? 5)
/** Another build of plumage to measure (default dist/plumage.mjs), e.g. one made before a change. */
const SERVER = process.env.BENCH_SERVER
const BODY = { text: 'a new message' }
/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100

interface Side {
  name: string
  url: string
  started: Started<string>
  headers: Record<string, string>
}

interface Sample {
  rate: number
  /** CPU µs per request: the node server's and RethinkDB's (NaN when unknown). */
  nodeCpu: number
  rethinkCpu: number
  /** Queries RethinkDB started per request. */
  queries: number
}

type AutocannonResult = Awaited<ReturnType<typeof autocannon>>

const progress = (line: string) => console.log(`[e2e ${new Date().toISOString().slice(11, 19)}] ${line}`)

/**
 * Runs the row on the server at `baseUrl` (rethinkdb://host:port, no database); `r` is the bench's own
 * connection to it (for the stats), `rethinkdbPid` the server's process when this machine runs it.
 */
export async function endToEndWrites(
  r: R,
  baseUrl: string,
  suffix: string,
  rethinkdbPid: number | undefined
): Promise<Record<string, string | number>[]> {
  const plumageMain = SERVER ?? fileURLToPath(new URL('../plumage.mjs', import.meta.url))
  if (!existsSync(plumageMain)) {
    console.log(`\nEnd-to-end writes SKIPPED: ${plumageMain} is missing (run \`npm run build\` first)`)
    return []
  }
  const bareMain = fileURLToPath(new URL('./support/rethinkdb-bare-server.mjs', import.meta.url))
  const limitMs = (120 + 2 * ROUNDS * 2 * (1 + DURATION) * 3) * 1000
  const watchdog = setTimeout(() => {
    console.error(`End-to-end writes did not finish within ${limitMs / 1000} s: stopping their servers`)
    killChildren()
    process.exit(1)
  }, limitMs)
  watchdog.unref()
  const sides: Side[] = []
  const databases = [`plumage_e2e_app_${suffix}`, `plumage_e2e_bare_${suffix}`]
  try {
    const plumage = await spawnPlumage('plumage', plumageMain, {
      HTTP: 'fastify',
      STORE: 'rethinkdb',
      RETHINKDB_URL: `${baseUrl}/${databases[0]}`
    })
    await jsonCall(plumage.value, 'POST', '/users', {}, BENCH_USER)
    sides.push({ name: 'plumage', url: plumage.value, started: plumage, headers: await bearerHeader(plumage.value) })
    progress(`plumage pid ${plumage.child.pid} ready on ${plumage.value}`)
    const bare = await startChild(
      'bare insert server',
      process.execPath,
      [bareMain],
      { ...process.env, NODE_ENV: 'production', RETHINKDB_URL: `${baseUrl}/${databases[1]}` },
      (line) => /^READY (\d+)$/.exec(line)?.[1]
    )
    sides.push({ name: 'bare', url: `http://127.0.0.1:${bare.value}`, started: bare, headers: {} })
    progress(`bare insert server pid ${bare.child.pid} ready on ${sides[1]!.url}`)

    const rows: Record<string, string | number>[] = []
    for (const connections of [1, 16]) {
      const samples: Sample[][] = [[], []]
      for (let round = 0; round < ROUNDS; round++) {
        for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
          const side = sides[index]!
          await run(side, connections, 1)
          const sample = await measured(r, side, connections, rethinkdbPid)
          samples[index]!.push(sample)
          progress(
            `${connections} conn, ${side.name}, round ${round + 1}: ${sample.rate.toFixed(0)} req/s, node ${sample.nodeCpu.toFixed(0)} µs, rethinkdb ${sample.rethinkCpu.toFixed(0)} µs, ${sample.queries.toFixed(2)} queries per request`
          )
        }
      }
      const ratios = samples[0]!.map((sample, round) => sample.rate / samples[1]![round]!.rate)
      const of = (index: number, key: keyof Sample) => median(samples[index]!.map((sample) => sample[key]))
      rows.push({
        connections,
        'bare insert req/s': of(1, 'rate'),
        'POST /messages req/s': of(0, 'rate'),
        'app ÷ bare ratio': median(ratios),
        'rounds (ratio)': `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`,
        'node µs/req (bare)': of(1, 'nodeCpu'),
        'node µs/req (app)': of(0, 'nodeCpu'),
        'rethinkdb µs/req (bare)': of(1, 'rethinkCpu'),
        'rethinkdb µs/req (app)': of(0, 'rethinkCpu'),
        'queries/req (bare)': of(1, 'queries'),
        'queries/req (app)': of(0, 'queries'),
        'load average': loadavg()[0]!
      })
    }
    return rows
  } finally {
    for (const side of sides) await stopChild(side.started.child, 'SIGTERM', 3_000)
    clearTimeout(watchdog)
    for (const db of databases)
      await r
        .dbDrop(db)
        .run()
        .catch(() => undefined)
  }
}

/** One measured run: its rate and, per request, the CPU of both processes and the queries RethinkDB ran. */
async function measured(r: R, side: Side, connections: number, rethinkdbPid: number | undefined): Promise<Sample> {
  const pid = side.started.child.pid!
  const before = { node: cpuMicros(pid), rethink: rethinkdbPid ? cpuMicros(rethinkdbPid) : NaN, q: await queries(r) }
  const result = await run(side, connections, DURATION)
  const after = { node: cpuMicros(pid), rethink: rethinkdbPid ? cpuMicros(rethinkdbPid) : NaN, q: await queries(r) }
  const requests = result.requests.total
  return {
    rate: result.requests.average,
    nodeCpu: (after.node - before.node) / requests,
    rethinkCpu: (after.rethink - before.rethink) / requests,
    // The stats query itself is one.
    queries: (after.q - before.q - 1) / requests
  }
}

/** Queries every server of the cluster started so far (rethinkdb.stats, query_engine.queries_total). */
async function queries(r: R): Promise<number> {
  const rows = (await r
    .db('rethinkdb')
    .table('stats')
    .filter((row: RDatum) => row('id').nth(0).eq('server'))
    .run()) as { query_engine?: { queries_total?: number } }[]
  return rows.reduce((sum, row) => sum + (row.query_engine?.queries_total ?? 0), 0)
}

/** User and system CPU time of a process so far, in µs (/proc/<pid>/stat: fields 14 and 15, in ticks). */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1e6
}

/** autocannon against one side; any error or non-2xx answer fails the bench. */
async function run(side: Side, connections: number, seconds: number): Promise<AutocannonResult> {
  const result = await autocannon({
    url: `${side.url}/messages`,
    connections,
    duration: seconds,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...side.headers },
    body: JSON.stringify(BODY)
  })
  if (result.errors > 0 || result.non2xx > 0)
    throw new Error(`${side.name}: ${result.errors} errors, ${result.non2xx} non-2xx responses`)
  return result
}
