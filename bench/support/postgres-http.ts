import autocannon from 'autocannon'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { BENCH_USER, bearerHeader } from './auth-setup.js'
import { jsonCall, median } from './measure.js'
import { killChildren, startChild, stopChild, type Started } from './processes.js'
import { BENCH_BCRYPT_ROUNDS as BCRYPT_ROUNDS, spawnPlumage } from './plumage-process.js'

/**
 * The HTTP rows of `npm run bench:postgres`: plumage (`node dist/plumage.mjs`, STORE=postgres) against
 * Feathers v5 + @feathersjs/knex (feathers-knex-server.ts) on the same PostgreSQL server, each in a
 * database of its own, both as their reference apps serve `messages`: behind a JWT, the same user and
 * secret. Both are seeded over HTTP with the same records, then autocannon measures each workload on
 * each server in turn, in BENCH_ROUNDS rounds (3) that alternate who goes first. Every wait is bounded:
 * servers must be ready within 60 s, every fetch within 10 s, every run lasts BENCH_DURATION seconds,
 * and a watchdog ends the whole section after a limit.
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 3)
/**
 * Rounds per workload, the servers' order alternating between rounds; the table shows the median rate of each and
 * the spread of the per-round ratios. One run per server moved a ratio by ±15 % between runs on a quiet machine.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20)
/** Records seeded in each database before measuring (created over HTTP, 10 at a time). */
const SEED = Number(process.env.BENCH_HTTP_RECORDS ?? 200)
/** Another build of plumage to measure (default dist/plumage.mjs), e.g. one made before a change. */
const SERVER = process.env.BENCH_SERVER
/** Only the workloads whose names start with one of these (comma-separated), e.g. `patch,create`. */
const ONLY_WORKLOADS = process.env.BENCH_WORKLOADS?.split(',').map((name) => name.trim())
/** bcrypt cost of both apps: the workloads log in once, so it only shortens the start. */

interface Server {
  name: string
  url: string
  started: Started<string>
  /** Authorization header of the bench user. */
  headers: Record<string, string>
  /** Ids of the seeded records, in creation order. */
  ids: (string | number)[]
}

interface Workload {
  name: string
  method?: 'GET' | 'POST' | 'PATCH'
  /** The path of the `call`-th request of a run (most workloads: always the same). */
  path: (server: Server, call: number) => string
  body?: unknown
}

/**
 * The message every seeded record is, by index: same data on both sides. Its sender is `sender`: the reference
 * app's `user` is the author its resolver adds (refused in data).
 */
const seedRecord = (i: number) => ({
  text: `message number ${i}`,
  sender: `user${i % 20}`,
  room: i % 3 === 0 ? 'general' : 'random',
  stars: String(i % 50)
})

const WORKLOADS: Workload[] = [
  { name: 'get', path: (server) => `/messages/${server.ids[Math.floor(server.ids.length / 2)]}` },
  { name: 'find (page of 10)', path: () => '/messages' },
  {
    name: 'filtered + sorted find',
    path: () =>
      '/messages?room=general&sender[$in][0]=user3&sender[$in][1]=user6&sender[$in][2]=user9&stars[$ne]=7&$sort[text]=-1&$limit=5'
  },
  { name: 'create', method: 'POST', path: () => '/messages', body: { ...seedRecord(1), text: 'a new message' } },
  { name: 'patch', method: 'PATCH', path: (server) => `/messages/${server.ids[0]}`, body: { text: 'patched text' } },
  // Twenty connections on one record measure that row's lock, taken by one committing writer at a time, more
  // than either server; here each request patches the next seeded record.
  {
    name: 'patch (records in turn)',
    method: 'PATCH',
    path: (server, call) => `/messages/${server.ids[call % server.ids.length]}`,
    body: { text: 'patched text' }
  }
]

/** The anchor's tables, as a generated Feathers app on PostgreSQL would migrate them (`user` is quoted by knex). */
const FEATHERS_TABLES_SQL = `
  CREATE TABLE users (id serial PRIMARY KEY, email text NOT NULL UNIQUE, password text NOT NULL);
  CREATE TABLE messages (id serial PRIMARY KEY, text text NOT NULL, sender text, room text, stars text, "userId" integer);
`

const progress = (line: string) => console.log(`[http ${new Date().toISOString().slice(11, 19)}] ${line}`)

/** Runs the section against two fresh databases made by `fresh()` on the bench's PostgreSQL server. */
export async function httpAgainstFeathers(fresh: () => Promise<string>): Promise<Record<string, string | number>[]> {
  const plumageMain = SERVER ?? fileURLToPath(new URL('../plumage.mjs', import.meta.url))
  const workloads = WORKLOADS.filter(
    (workload) => !ONLY_WORKLOADS || ONLY_WORKLOADS.some((name) => workload.name.startsWith(name))
  )
  if (!existsSync(plumageMain)) {
    console.log(`\nHTTP vs Feathers + knex SKIPPED: ${plumageMain} is missing (run \`npm run build\` first)`)
    return []
  }
  const feathersMain = fileURLToPath(new URL('./support/feathers-knex-server.mjs', import.meta.url))
  // A run of every workload × rounds × 2 servers × (1 s warm-up + DURATION) plus starts and seeding: far below this.
  const limitMs = (120 + workloads.length * ROUNDS * 2 * (1 + DURATION) * 3) * 1000
  const watchdog = setTimeout(() => {
    console.error(`HTTP section did not finish within ${limitMs / 1000} s: stopping its servers`)
    killChildren()
    process.exit(1)
  }, limitMs)
  watchdog.unref()
  const servers: Server[] = []
  try {
    const [plumageUrl, feathersUrl] = [await fresh(), await fresh()]
    const admin = new pg.Client({ connectionString: feathersUrl })
    await admin.connect()
    await admin.query(FEATHERS_TABLES_SQL).finally(() => admin.end())

    progress('starting plumage (STORE=postgres)')
    const plumage = await spawnPlumage('plumage', plumageMain, { STORE: 'postgres', POSTGRES_URL: plumageUrl })
    servers.push(await prepare('plumage', plumage.value, plumage))
    progress(`plumage pid ${plumage.child.pid} ready on ${plumage.value}, ${SEED} records seeded`)

    progress('starting Feathers + @feathersjs/knex')
    const feathers = await startChild(
      'Feathers + knex',
      process.execPath,
      [feathersMain],
      { ...process.env, NODE_ENV: 'production', BCRYPT_ROUNDS, POSTGRES_URL: feathersUrl },
      (line) => /^READY (\d+)$/.exec(line)?.[1]
    )
    const url = `http://127.0.0.1:${feathers.value}`
    servers.push(await prepare('feathers', url, feathers))
    progress(`Feathers pid ${feathers.child.pid} ready on ${url}, ${SEED} records seeded`)

    const rows: Record<string, string | number>[] = []
    for (const workload of workloads) {
      const rates = servers.map(() => [] as number[])
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? [0, 1] : [1, 0]
        for (const index of order) {
          const server = servers[index]!
          // A short warm-up lets the JIT and the connection pools settle before the measured run.
          await run(server, workload, 1)
          rates[index]!.push(await run(server, workload, DURATION))
          progress(`${workload.name} on ${server.name}, round ${round + 1}: ${rates[index]!.at(-1)!.toFixed(0)} req/s`)
        }
      }
      if (workload.name === 'patch')
        progress(`patch's ceiling: ${(await oneRowCeiling(await fresh())).toFixed(0)} bare UPDATEs/s`)
      const [ours, theirs] = rates.map(median) as [number, number]
      const ratios = rates[0]!.map((rate, round) => rate / rates[1]![round]!)
      rows.push({
        workload: workload.name,
        'plumage req/s': ours,
        'feathers+knex req/s': theirs,
        ratio: ours / theirs,
        'ratio per round': `${Math.min(...ratios).toFixed(2)}…${Math.max(...ratios).toFixed(2)}`
      })
    }
    return rows
  } finally {
    for (const server of servers) await stopChild(server.started.child, 'SIGTERM', 3_000)
    clearTimeout(watchdog)
  }
}

/**
 * What PostgreSQL alone gives the one-record patch: CONNECTIONS clients of `pg` each running a bare,
 * prepared `UPDATE … WHERE key = $1` of the same row, one after the other, for DURATION seconds. Each waits
 * for the row's lock, which the previous writer holds until its commit is flushed.
 */
async function oneRowCeiling(url: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: CONNECTIONS })
  try {
    await pool.query(`CREATE TABLE one_row (key text PRIMARY KEY, doc jsonb NOT NULL)`)
    await pool.query(`INSERT INTO one_row VALUES ('1', '{"id": 1, "text": "a message"}')`)
    let updates = 0
    const start = performance.now()
    const end = start + DURATION * 1000
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < end) {
          await pool.query({
            name: 'patch',
            text: 'UPDATE one_row SET doc = doc || $2::jsonb WHERE key = $1',
            values: ['1', '{"text": "patched text"}']
          })
          updates++
        }
      })
    )
    return updates / ((performance.now() - start) / 1000)
  } finally {
    await pool.end()
  }
}

/** Signs the bench user up, logs in, seeds the records; answers the server with what the workloads need. */
async function prepare(name: string, url: string, started: Started<string>): Promise<Server> {
  const server: Server = { name, url, started, headers: {}, ids: [] }
  try {
    await jsonCall(url, 'POST', '/users', {}, BENCH_USER)
    server.headers = await bearerHeader(url)
    for (let i = 0; i < SEED; i += 10) {
      const batch = Array.from({ length: Math.min(10, SEED - i) }, (_, j) =>
        jsonCall(url, 'POST', '/messages', server.headers, seedRecord(i + j))
      )
      for (const created of await Promise.all(batch)) server.ids.push((created as { id: string | number }).id)
    }
    return server
  } catch (error) {
    await stopChild(started.child, 'SIGTERM', 3_000)
    throw error
  }
}

/** Requests per second of one workload on one server; any error or non-2xx answer fails the bench. */
async function run(server: Server, workload: Workload, seconds: number): Promise<number> {
  let calls = 0
  const result = await autocannon({
    url: server.url + workload.path(server, 0),
    requests: [{ setupRequest: (request) => ({ ...request, path: workload.path(server, calls++) }) }],
    connections: CONNECTIONS,
    duration: seconds,
    method: workload.method ?? 'GET',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...server.headers },
    body: workload.body === undefined ? undefined : JSON.stringify(workload.body)
  })
  if (result.errors > 0 || result.non2xx > 0)
    throw new Error(`${server.name} / ${workload.name}: ${result.errors} errors, ${result.non2xx} non-2xx responses`)
  return result.requests.average
}
