/**
 * Cursor pagination: page 1 against page 1,000 (25 records a page, sorted by score, ties by id) on
 * 100,000 records (`BENCH_RECORDS`), by cursor (`$after`, `$count: false`) and, for contrast, by
 * `$skip` (with its count), through AdapterService on each store: memory, RethinkDB (with an index on
 * the sort key and one on it and the id, then with the compound one alone) and PostgreSQL (with an expression index
 * on it); the median of `BENCH_ROUNDS` alternating rounds of `BENCH_SECONDS` each, and the CPU time of the pages
 * (this process's, plus the RethinkDB server's when its process is known). Goal (issue 26): by cursor, page 1,000
 * costs at most 1.2× page 1; the same by cursor in descending order (the chat's newest first).
 * Run: `node bench/run.mjs cursors` (`BENCH_STORES=rethinkdb` for one store); RethinkDB runs on
 * `RETHINKDB_URL` (`RETHINKDB_PID`: that server's process, to count its CPU), or on a throw-away server started
 * from `RETHINKDB_BIN`, and PostgreSQL on
 * `POSTGRES_URL` or a throw-away server (test/support/postgres-server.ts); a store without a server is
 * left out, saying so.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { AdapterService } from '../src/application/adapter-service.js'
import { encodeCursor, fingerprint, keysetSort } from '../src/domain/query/cursor.js'
import { parseQuery } from '../src/domain/query/parse-query.js'
import type { CursorPage, Data, Paginated } from '../src/domain/service/service.js'
import type { Store } from '../src/domain/store/store.js'
import { InMemoryStore } from '../src/infrastructure/memory/in-memory-store.js'
import { PostgresDatabase } from '../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../src/infrastructure/postgres/postgres-store-factory.js'
import { connectRethinkDb, type RethinkDbConnection } from '../src/infrastructure/rethinkdb/rethinkdb-connection.js'
import { RethinkDbStore } from '../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { discoverPostgres } from '../test/support/postgres-server.js'
import { RETHINKDB_BIN, rethinkDbProcess, type RethinkDbProcess } from '../test/support/rethinkdb-process.js'
import { measure, printTable, writeResults } from './support/measure.js'
import { peopleRecords, peopleSchema } from './support/seed.js'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000)
const PAGE = 25
const DEEP = 1_000
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1)
const records = peopleRecords(RECORDS)
/** Ties broken by the id in both ways, so that page 1,000 by `$skip` holds the same records as by cursor. */
const sort = { score: 1, id: 1 } as const
/** The chat's order (newest first), both keys descending. */
const newestFirst = { score: -1, id: -1 } as const
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

const rows: Record<string, string | number>[] = []

/**
 * How a row counts CPU time: `server` gives the database server's CPU milliseconds so far (0 for a store in this
 * process); without it a row reports wall-clock ratios only.
 */
interface CpuOptions {
  server?: () => number
}

/** The cursor rows of `store`, then (unless `skip` is false) the `$skip` row. */
async function bench(label: string, store: Store, { skip = true, server }: CpuOptions & { skip?: boolean } = {}) {
  const before = rows.length
  const service = new AdapterService<Data>(store, { paginate: { default: PAGE, max: 100 } })
  const bySkip = (skip: number) => () => service.find({ query: { $sort: sort, $skip: skip } })
  const up = await cursorPages(label, service, store.id, sort, server)
  const down = await cursorPages(label, service, store.id, newestFirst, server)
  rows.push(row(`${label}: cursor ($after, $count: false)`, ...up), row(`${label}: cursor, descending`, ...down))
  if (skip) {
    const [skipFirst, skipDeep] = await alternate(bySkip(0), bySkip((DEEP - 1) * PAGE))
    rows.push(row(`${label}: $skip (with total), for contrast`, skipFirst, skipDeep))
  }
  console.log(rows.slice(before))
}

/**
 * Ops/s of cursor pages 1 and 1,000, the CPU time of a page 1,000 over a page 1 (this process and the server), then
 * page 1,000's time over page 2's (page 2 is the first read through a cursor's filter: against it, page 1,000 shows
 * what depth costs), in `order`.
 */
async function cursorPages(
  label: string,
  service: AdapterService<Data>,
  id: string,
  order: Record<string, 1 | -1>,
  server: CpuOptions['server']
): Promise<[number, number, number | undefined, number]> {
  // The cursor page 1,000 starts after: the position of the last record of page 999.
  const skipped = (await service.find({
    query: { $sort: order, $skip: (DEEP - 1) * PAGE - 1, $limit: 1 }
  })) as Paginated<Data>
  const keyset = keysetSort(parseQuery({ $sort: order }).sort, id)
  const deepCursor = encodeCursor(skipped.data[0]!, keyset, fingerprint(parseQuery({}).filter, keyset))
  const byCursor = (after: string) => () => service.find({ query: { $sort: order, $after: after, $count: false } })
  // Both ways give page 1,000 the same records.
  const viaCursor = (await byCursor(deepCursor)()) as CursorPage<Data>
  const viaSkip = (await service.find({ query: { $sort: order, $skip: (DEEP - 1) * PAGE } })) as Paginated<Data>
  if (JSON.stringify(viaCursor.data) !== JSON.stringify(viaSkip.data))
    throw new Error(`${label}: page ${DEEP} by cursor and by $skip differ (${JSON.stringify(order)})`)
  const second = ((await byCursor('')()) as CursorPage<Data>).next!
  const [first, deep, cpu] = await alternate(byCursor(''), byCursor(deepCursor), server)
  const [fromSecond, deepAgain] = await alternate(byCursor(second), byCursor(deepCursor))
  return [first, deep, cpu, fromSecond / deepAgain]
}

/** Whether the run includes this store (`BENCH_STORES`, e.g. `rethinkdb`; default: all). */
function included(store: string): boolean {
  const only = process.env.BENCH_STORES
  return !only || only.split(',').includes(store)
}

/**
 * Median ops/s of `ROUNDS` rounds of each, alternating (who goes first rotates), on a shared machine; with `server`,
 * also the CPU time a deep call costs over a first one (this process's and the server's, summed over every round),
 * which other work on the machine disturbs less than the wall clock.
 */
async function alternate(
  first: () => unknown,
  deep: () => unknown,
  server?: () => number
): Promise<[number, number, number | undefined]> {
  const results: [number[], number[]] = [[], []]
  const cpu = [0, 0]
  const calls = [0, 0]
  const fns = [first, deep]
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0]
    for (const which of order) {
      const fn = fns[which]!
      const counted = () => (calls[which]!++, fn())
      const before = cpuTime(server)
      results[which]!.push((await measure(counted, { seconds: SECONDS })).opsPerSecond)
      cpu[which]! += cpuTime(server) - before
    }
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const ratio = server ? cpu[1]! / calls[1]! / (cpu[0]! / calls[0]!) : undefined
  return [median(results[0]), median(results[1]), ratio]
}

/** CPU milliseconds of this process so far, plus the server's. */
function cpuTime(server: (() => number) | undefined): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000 + (server?.() ?? 0)
}

/**
 * The CPU milliseconds process `pid` has used (Linux: /proc/<pid>/stat, in ticks of 10 ms), or undefined where it
 * cannot be read.
 */
function processCpu(pid: number | undefined): (() => number) | undefined {
  const read = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  }
  try {
    return pid === undefined ? undefined : (read(), read)
  } catch {
    return undefined
  }
}

function row(
  workload: string,
  first: number,
  deep: number,
  cpu?: number,
  fromSecond?: number
): Record<string, string | number> {
  return {
    workload,
    'page 1 ops/s': first,
    [`page ${DEEP} ops/s`]: deep,
    'page 1000/page 1 time ratio': first / deep,
    'page 1000/page 1 CPU ratio': cpu ?? '—',
    'page 1000/page 2 time ratio': fromSecond ?? '—'
  }
}

async function fill(store: Store): Promise<void> {
  for (let index = 0; index < records.length; index += 1_000)
    await store.create(records.slice(index, index + 1_000), {})
}

// memory
if (included('memory')) {
  const store = new InMemoryStore()
  await fill(store)
  await bench('memory', store, { server: () => 0 })
}

// RethinkDB
if (included('rethinkdb')) {
  let server: RethinkDbProcess | undefined
  let connection: RethinkDbConnection | undefined
  try {
    let url = process.env.RETHINKDB_URL
    if (!url && RETHINKDB_BIN) {
      server = await rethinkDbProcess('bench-cursors')
      url = `rethinkdb://127.0.0.1:${server.driverPort}`
    }
    if (!url) console.log('RethinkDB rows SKIPPED: set RETHINKDB_URL or RETHINKDB_BIN')
    else {
      connection = await connectRethinkDb(url, { timeoutMs: 10_000 })
      const db = `plumage_bench_${randomBytes(4).toString('hex')}`
      const options = { r: connection.r, db, table: 'people', watch: false, schema: peopleSchema }
      const store = new RethinkDbStore({ ...options, indexes: [{ fields: ['score'] }, { fields: ['score', 'id'] }] })
      await store.init()
      for (let index = 0; index < records.length; index += 1_000)
        await store
          .table()
          .insert(records.slice(index, index + 1_000))
          .run()
      const cpu = processCpu(server?.pid ?? (process.env.RETHINKDB_PID ? Number(process.env.RETHINKDB_PID) : undefined))
      await bench('RethinkDB', store, cpu ? { server: cpu } : {})
      // The same table as a service declaring only the compound index (the README's advice for the order it pages
      // by): page 1 then reads that index too, where above it reads the cheaper one on score alone.
      const compoundOnly = new RethinkDbStore({ ...options, indexes: [{ fields: ['score', 'id'] }] })
      await bench('RethinkDB, compound index only', compoundOnly, { skip: false, ...(cpu ? { server: cpu } : {}) })
      await connection.r.dbDrop(db).run()
    }
  } finally {
    await connection?.close()
    await server?.destroy()
  }
}

// PostgreSQL
if (included('postgresql')) {
  const database = await discoverPostgres()
  if (!database) console.log('PostgreSQL rows SKIPPED: set POSTGRES_URL or install PostgreSQL')
  else {
    const factory = new PostgresStoreFactory(new PostgresDatabase({ url: database.url }), { watch: false })
    try {
      const store = factory.create('people', { indexes: [{ fields: ['score'] }], schema: peopleSchema })
      await store.setup!()
      await fill(store)
      await bench('PostgreSQL', store)
    } finally {
      await factory.close()
      await database.stop()
    }
  }
}

printTable(
  `Page 1 vs page ${DEEP} (${PAGE} a page, $sort score) on ${RECORDS.toLocaleString()} records (goal: cursor ≤ 1.2×)`,
  rows
)
writeResults('cursors', rows)
