/**
 * PostgresStore against hand-written `pg` queries on the same tables, in one run on one server: the
 * same finds and writes through the store (every value a parameter, the memory store's semantics;
 * the records' schema declared, as a service does) and as a developer would write them by hand,
 * with the same expression indexes. A second table compares durable writes: bare single-row inserts against store
 * creates whose event goes into the outbox by trigger in the same transaction, with 1 and 16
 * writers in flight. Run: `npm run bench:postgres` (POSTGRES_URL, else a throw-away server from
 * Debian's binaries; skips, exit 0, with neither); `BENCH_RECORDS` sets the table size (default
 * 10,000), `BENCH_ROUNDS` the rounds (default 7; medians are reported), `BENCH_ROUND_SECONDS` the length of
 * one interleaved round of the store table (default 1.5).
 * Then plumage against Feathers v5 + @feathersjs/knex over HTTP on the same server (support/postgres-http.ts;
 * needs `npm run build`); `BENCH_ONLY=http` runs only that part, `BENCH_ONLY=store` all but that part,
 * `BENCH_ONLY=queries` only the first table (store against hand-written queries),
 * `BENCH_DURATION` sets its seconds per run, `BENCH_WORKLOADS=patch,create` keeps the HTTP workloads whose names
 * start so, `BENCH_SERVER=<file>` measures another build of plumage (one made before a change, to compare in turn).
 */
import { existsSync, openSync, readSync } from 'node:fs'
import { loadavg } from 'node:os'
import pg from 'pg'
import { PostgresDatabase } from '../src/infrastructure/postgres/postgres-database.js'
import { redactPostgresUrl } from '../src/infrastructure/postgres/postgres-settings.js'
import { PostgresStoreFactory } from '../src/infrastructure/postgres/postgres-store-factory.js'
import { discoverPostgres } from '../test/support/postgres-server.js'
import { median, printTable, writeResults } from './support/measure.js'
import { httpAgainstFeathers } from './support/postgres-http.js'
import { peopleIndexes, postgresWorkloads } from './support/postgres-workloads.js'
import { peopleRecords, peopleSchema } from './support/seed.js'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 10_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
/** Seconds of one interleaved round of a store workload (both variants together). */
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 1.5)
const ONLY = process.env.BENCH_ONLY
if (ONLY !== undefined && ONLY !== 'http' && ONLY !== 'store' && ONLY !== 'queries')
  throw new Error(`BENCH_ONLY must be 'http', 'store' or 'queries', got '${ONLY}'`)

const database = await discoverPostgres()
if (!database) {
  console.log('PostgreSQL benchmark SKIPPED: set POSTGRES_URL or install PostgreSQL (apt-get install postgresql)')
  process.exit(0)
}
const shown = redactPostgresUrl(database.url)
/** The machine may be shared: its load average goes with the numbers. */
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ')
const startLoad = load()
const hand = new pg.Pool({ connectionString: database.url, max: 10 })
const quiet = new PostgresStoreFactory(new PostgresDatabase({ url: database.url }), { watch: false })
const live = new PostgresStoreFactory(new PostgresDatabase({ url: database.url }))

try {
  if (ONLY !== 'http') {
    await readsAgainstHandWritten()
    if (ONLY !== 'queries') await durableWrites()
  }
  const http = ONLY === 'store' || ONLY === 'queries' ? [] : await httpAgainstFeathers(database.fresh)
  if (http.length > 0) {
    printTable(
      `HTTP: plumage (STORE=postgres) vs Feathers v5 + @feathersjs/knex, same PostgreSQL, JWT (${shown})`,
      http
    )
    writeResults('postgres-http', http)
  }
  console.log(`\nLoad average (1/5/15 min): start ${startLoad}, end ${load()}`)
} finally {
  await quiet.close()
  await live.close()
  await hand.end()
  await database.stop()
}

async function readsAgainstHandWritten(): Promise<void> {
  const store = quiet.create('people', { indexes: peopleIndexes, schema: peopleSchema })
  await store.setup!()
  const records = peopleRecords(RECORDS)
  for (let i = 0; i < records.length; i += 1_000) await store.create(records.slice(i, i + 1_000), {})
  await hand.query('ANALYZE people')
  const workloads = postgresWorkloads(hand, RECORDS)
  for (const workload of workloads) {
    if (workload.same && !workload.same(await workload.store(store), await workload.hand()))
      throw new Error(`Results differ for '${workload.name}'`)
  }
  const table = []
  for (const workload of workloads) {
    const variants = [workload.hand, () => workload.store(store)]
    await interleaved(variants, 0.2)
    // Every round times both variants one call at a time, turn about (the first to go alternates), so that a
    // busy moment of the shared machine falls on both alike; the overhead is the median of the rounds' own.
    const rounds: Round[] = []
    for (let round = 0; round < ROUNDS; round++) rounds.push(await interleaved(variants, ROUND_SECONDS))
    const [handRate, storeRate] = [0, 1].map((side) => median(rounds.map(({ rates }) => rates[side]!)))
    const overheads = rounds.map(({ rates: [hand, ours] }) => (hand! / ours! - 1) * 100)
    const [handCpu, storeCpu] = [0, 1].map((side) => median(rounds.map(({ cpu }) => cpu[side]!)))
    const cpuRatios = rounds.map(({ cpu: [hand, ours] }) => ours! / hand!)
    table.push({
      workload: workload.name,
      'hand-written ops/s': handRate!,
      'store ops/s': storeRate!,
      'overhead %': median(overheads),
      'overhead spread %': spread(overheads, 0),
      'hand CPU µs/call': handCpu!,
      'store CPU µs/call': storeCpu!,
      'CPU ratio': median(cpuRatios),
      'CPU ratio spread': spread(cpuRatios, 2)
    })
  }
  printTable(
    `PostgresStore vs hand-written pg queries (${RECORDS.toLocaleString()} records, indexed, ${shown}, median of ${ROUNDS} interleaved rounds of ${ROUND_SECONDS} s, load ${load()})`,
    table
  )
  writeResults(`postgres-${RECORDS}`, table)
}

/** Durable writes: what the outbox costs. Both tables start empty; every write is a new record. */
async function durableWrites(): Promise<void> {
  const logged = live.create('writes_logged')
  await logged.setup!()
  await hand.query('CREATE TABLE writes_bare (key text PRIMARY KEY, doc jsonb NOT NULL)')
  let serial = 0
  const table = []
  for (const writers of [1, 16]) {
    const variants = [
      () => {
        const n = serial++
        return hand.query('INSERT INTO writes_bare (key, doc) VALUES ($1, $2::jsonb)', [
          String(n),
          JSON.stringify({ id: n, text: 'a message of some length', at: Date.now() })
        ])
      },
      () => logged.create([{ id: serial++, text: 'a message of some length', at: Date.now() }], {})
    ]
    const samples: number[][] = variants.map(() => [])
    for (let round = 0; round < ROUNDS; round++)
      for (const [index, write] of variants.entries()) samples[index]!.push(await concurrently(write, writers, 1.5))
    const [bareRate, loggedRate] = samples.map(median) as [number, number]
    table.push({
      writers,
      'bare insert/s': bareRate,
      'store create + outbox/s': loggedRate,
      'logged ÷ bare ratio': loggedRate / bareRate
    })
  }
  printTable(
    `Durable writes: bare inserts vs store creates with the outbox (${shown}, median of ${ROUNDS} rounds)`,
    table
  )
  writeResults('postgres-writes', table)
}

/** One interleaved round: calls per second of each variant, and the process's CPU time per call in µs. */
interface Round {
  rates: number[]
  cpu: number[]
}

/**
 * Calls per second of each variant when called in turn, one call at a time, for about `seconds` in all: each
 * call is timed on its own and the variant that goes first alternates, so both see the same moments of the machine.
 * Both wait on the same server, whose share of a busy machine moves from round to round: the CPU the main thread
 * spends per call (one call in flight, so it is that call's) is the steadier figure of what the client side costs.
 */
async function interleaved(variants: (() => Promise<unknown>)[], seconds: number): Promise<Round> {
  const spent = variants.map(() => 0)
  const cpu = variants.map(() => 0)
  const calls = variants.map(() => 0)
  const end = performance.now() + seconds * 1000
  for (let turn = 0; performance.now() < end; turn++) {
    for (let i = 0; i < variants.length; i++) {
      const index = (turn + i) % variants.length
      const cpuStart = mainThreadCpu()
      const start = performance.now()
      await variants[index]!()
      spent[index]! += performance.now() - start
      cpu[index]! += mainThreadCpu() - cpuStart
      calls[index]!++
    }
  }
  return {
    rates: spent.map((ms, index) => calls[index]! / (ms / 1000)),
    cpu: cpu.map((micros, index) => micros / calls[index]!)
  }
}

const schedstat = existsSync('/proc/thread-self/schedstat') ? openSync('/proc/thread-self/schedstat', 'r') : undefined
const schedstatBuffer = Buffer.alloc(64)

/**
 * The main thread's CPU time in µs: on Linux its own run time (/proc/thread-self/schedstat, in ns; read in 3 µs),
 * which leaves out V8's helper threads (concurrent GC, compilation) whose work lands on whichever call happens to
 * wait; elsewhere the whole process's (user + system).
 */
function mainThreadCpu(): number {
  if (schedstat === undefined) {
    const { user, system } = process.cpuUsage()
    return user + system
  }
  const length = readSync(schedstat, schedstatBuffer, 0, schedstatBuffer.length, 0)
  return Number(schedstatBuffer.toString('latin1', 0, length).split(' ', 1)[0]) / 1000
}

/** Writes per second with `writers` loops each awaiting one write at a time, for about `seconds`. */
async function concurrently(write: () => Promise<unknown>, writers: number, seconds: number): Promise<number> {
  const end = performance.now() + seconds * 1000
  let writes = 0
  const start = performance.now()
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (performance.now() < end) {
        await write()
        writes++
      }
    })
  )
  return writes / ((performance.now() - start) / 1000)
}

/** The lowest and highest of `values`, e.g. `-3…12`. */
function spread(values: number[], digits: number): string {
  return `${Math.min(...values).toFixed(digits)}…${Math.max(...values).toFixed(digits)}`
}
