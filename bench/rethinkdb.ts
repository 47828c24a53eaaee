/**
 * RethinkDbStore against hand-written rethinkdb-ts queries, on one server in the same run: the same
 * finds and writes through the store without a schema (every type guard), with the records' schema
 * (no guards where types are known), and with the schema and indexes (index reads), next to the
 * hand-written unindexed query. Run: `RETHINKDB_URL=rethinkdb://127.0.0.1:28015 node bench/run.mjs rethinkdb`
 * (skips, exit 0, when no server answers); `BENCH_RECORDS=100000` sets the table size (default
 * 10,000), `BENCH_ROUNDS` the rounds per variant (default 5; each variant's median is reported).
 * A second table compares durable writes: bare single-record inserts against store creates that log
 * their events (the event log's counter and log insert in the same query, group commit), with 1 and
 * 16 writers in flight (15 rounds unless BENCH_ROUNDS; the ratio is the median of each round's own);
 * a third times query shapes with one writer, interleaved: what any design can reach on this server
 * (docs/adr/0008-cheap-exactly-once.md). A fourth measures the write path end to end: the reference app's
 * `POST /messages` (fastify, JWT) against a bare node:http server doing one durable insert per request, with the
 * CPU time of node and of RethinkDB per request (support/rethinkdb-http.ts). `BENCH_ONLY=writes` runs only the
 * writes (about a minute) and the end-to-end row (about two), `BENCH_ONLY=e2e` only that row. With
 * RETHINKDB_BIN (a `rethinkdb` executable) and no RETHINKDB_URL, the bench starts its own server in a temp folder
 * (then RethinkDB's CPU per request is known). A last table times keyed creates (idempotency keys, ADR 0020)
 * against unkeyed ones; `BENCH_ONLY=keyed` runs only it. Works in throw-away databases that it drops.
 */
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import type { StoreQuery } from '../src/domain/query/ast.js'
import { parseQuery } from '../src/domain/query/parse-query.js'
import {
  connectRethinkDb,
  redactRethinkDbUrl,
  type RethinkDbConnection
} from '../src/infrastructure/rethinkdb/rethinkdb-connection.js'
import { RethinkDbStore } from '../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { measure, median, printTable, writeResults } from './support/measure.js'
import { endToEndWrites } from './support/rethinkdb-http.js'
import { startOwnRethinkDb, type OwnRethinkDb } from './support/rethinkdb-process.js'
import { peopleRecords, peopleSchema } from './support/seed.js'

const RECORDS = recordCount(process.env.BENCH_RECORDS)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
/** Rounds of the durable-writes comparison (each 0.5 s per side: short rounds keep both sides close in time). */
const WRITE_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15)
const own: OwnRethinkDb | undefined = process.env.RETHINKDB_URL ? undefined : await startOwnRethinkDb()
const url = own?.url ?? process.env.RETHINKDB_URL ?? 'rethinkdb://127.0.0.1:28015'
/** What the output shows: the URL without its password. */
const shown = redactRethinkDbUrl(url)

let connection: RethinkDbConnection
try {
  connection = await connectRethinkDb(url, { timeoutMs: 3_000 })
} catch {
  await own?.stop()
  console.log(
    `RethinkDB benchmark SKIPPED: no server answers at ${shown} (set RETHINKDB_URL or start one: docker compose up rethinkdb)`
  )
  process.exit(0)
}

const { r } = connection
const db = `plumage_bench_${randomBytes(4).toString('hex')}`
const records = peopleRecords(RECORDS)

/** `writes`: only the durable-writes tables and the end-to-end row (the reads take a few minutes); `e2e`: that row. */
const ONLY = process.env.BENCH_ONLY
if (ONLY !== undefined && !['writes', 'e2e', 'keyed'].includes(ONLY))
  throw new Error(`BENCH_ONLY must be 'writes', 'e2e' or 'keyed', got '${ONLY}'`)

const q = (raw: Record<string, unknown>): StoreQuery => parseQuery(raw, { operators: ['$search', '$contains'] })

try {
  if (ONLY === undefined) await readsAgainstHandWritten()
  if (ONLY === undefined || ONLY === 'writes') await durableWrites()
  const rows =
    ONLY === 'keyed'
      ? []
      : await endToEndWrites(
          r,
          url.replace(/^(rethinkdb:\/\/[^/]*)\/.*$/, '$1'),
          randomBytes(4).toString('hex'),
          own?.pid
        )
  if (rows.length > 0) {
    printTable(
      `End to end: POST /messages (fastify, JWT, STORE=rethinkdb) vs a bare node:http insert per request (${shown}, median of the rounds; CPU per request from /proc)`,
      rows
    )
    writeResults('rethinkdb-end-to-end', rows)
  }
  if (ONLY === undefined || ONLY === 'keyed') await keyedCreates()
} finally {
  await r
    .dbDrop(db)
    .run()
    .catch(() => undefined)
  await connection.close()
  await own?.stop()
}

/** The store's finds and writes against hand-written queries, without and with a schema and indexes. */
async function readsAgainstHandWritten(): Promise<void> {
  const untyped = new RethinkDbStore({ r, db, table: 'people', watch: false })
  // The same table, with the records' schema.
  const typed = new RethinkDbStore({ r, db, table: 'people', watch: false, schema: peopleSchema })
  const indexed = new RethinkDbStore({
    r,
    db,
    table: 'people_indexed',
    watch: false,
    schema: peopleSchema,
    indexes: [{ fields: ['city'] }, { fields: ['age'] }, { fields: ['city', 'score'] }]
  })
  for (const store of [untyped, indexed]) {
    await store.init()
    for (let i = 0; i < records.length; i += 1_000)
      await store
        .table()
        .insert(records.slice(i, i + 1_000))
        .run()
  }
  const table = untyped.table()

  let next = RECORDS
  // `same`: how to tell that two ways answered the same (unsorted limits may pick different rows).
  const workloads: {
    name: string
    store: (store: RethinkDbStore) => Promise<unknown>
    hand: () => Promise<unknown>
    same?: (ours: unknown, theirs: unknown) => boolean
  }[] = [
    {
      name: 'find: equality, limit 50',
      store: (store) => store.find(q({ city: 'Berlin', $limit: 50 })),
      hand: () => table.filter({ city: 'Berlin' }).limit(50).run(),
      same: (ours, theirs) =>
        [ours, theirs].every(
          (rows) => Array.isArray(rows) && rows.length === 50 && rows.every((row) => row.city === 'Berlin')
        )
    },
    {
      name: 'find: $in + $gte + 2-key sort + limit 10',
      store: (store) =>
        store.find(
          q({ city: { $in: ['Rome', 'Oslo'] }, age: { $gte: 30 }, $sort: { age: -1, name: 1, id: 1 }, $limit: 10 })
        ),
      hand: () =>
        table
          .filter((row) => r.expr(['Rome', 'Oslo']).contains(row('city')).and(row('age').ge(30)))
          .orderBy(r.desc('age'), r.asc('name'), r.asc('id'))
          .limit(10)
          .run(),
      same: (ours, theirs) => JSON.stringify(ours) === JSON.stringify(theirs)
    },
    {
      name: 'page: total + 25 sorted by score',
      store: (store) => store.page(q({ city: 'Paris', $sort: { score: 1, id: 1 }, $limit: 25 })),
      hand: () => {
        const matches = table.filter({ city: 'Paris' })
        return r
          .expr({ total: matches.count(), data: matches.orderBy('score', 'id').limit(25).coerceTo('array') })
          .run()
      },
      same: (ours, theirs) => JSON.stringify(ours) === JSON.stringify(theirs)
    },
    {
      name: 'get by id',
      store: (store) => store.get(4242, q({})),
      hand: () => table.get(4242).run(),
      same: (ours, theirs) => JSON.stringify(ours) === JSON.stringify(theirs)
    },
    {
      name: 'create one',
      store: (store) => store.create([{ id: next++, name: 'new', age: 1, city: 'Oslo', score: 0 }], {}),
      hand: () =>
        table.insert({ id: next++, name: 'new', age: 1, city: 'Oslo', score: 0 }, { returnChanges: true }).run()
    },
    {
      name: 'patch by id',
      store: (store) => store.patch(17, { score: Math.random() }, q({})),
      hand: () => table.get(17).update({ score: Math.random() }, { returnChanges: true }).run()
    }
  ]

  // Reads must answer the same records every way, or the comparison means nothing.
  for (const workload of workloads) {
    if (!workload.same) continue
    const theirs = await workload.hand()
    for (const store of [untyped, typed, indexed]) {
      if (!workload.same(await workload.store(store), theirs))
        throw new Error(
          `Results differ for '${workload.name}' (${store === untyped ? 'no schema' : store === typed ? 'schema' : 'indexes'})`
        )
    }
  }

  const rows = []
  for (const workload of workloads) {
    // Rounds alternate the variants, so that a slow moment of the machine does not fall on one of them.
    const variants = [
      workload.hand,
      () => workload.store(untyped),
      () => workload.store(typed),
      () => workload.store(indexed)
    ]
    const samples: number[][] = variants.map(() => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, run] of variants.entries())
        samples[index]!.push((await measure(run, { seconds: 0.6, warmup: 0.1 })).opsPerSecond)
    }
    const [hand, plain, withSchema, withIndexes] = samples.map(median) as [number, number, number, number]
    rows.push({
      workload: workload.name,
      'hand-written ops/s': hand,
      'store ops/s': plain,
      'overhead %': (hand / plain - 1) * 100,
      '+ schema ops/s': withSchema,
      'overhead (schema) %': (hand / withSchema - 1) * 100,
      '+ indexes ops/s': withIndexes,
      'indexed ÷ hand ratio': withIndexes / hand
    })
  }
  printTable(
    `RethinkDbStore vs hand-written rethinkdb-ts queries (${RECORDS.toLocaleString()} records, ${shown}, same run, median of ${ROUNDS} rounds)`,
    rows
  )
  writeResults(`rethinkdb-${RECORDS}`, rows)
}

/**
 * Durable writes: what exactly-once costs. Every write is a new record; the tables start empty. Each
 * round measures both sides back to back (which goes first alternates) and the ratio is the median
 * of the rounds' own ratios, so a slow moment of a shared machine falls on both sides of one ratio.
 */
async function durableWrites(): Promise<void> {
  const logged = new RethinkDbStore({ r, db, table: 'writes_logged' })
  await logged.init()
  for (const name of ['writes_bare', 'writes_one', 'writes_two', 'writes_log']) await r.db(db).tableCreate(name).run()
  const table = (name: string) => r.db(db).table(name)
  let serial = 0
  const message = () => ({ n: serial++, text: 'a message of some length', at: Date.now() })
  const bare = () => table('writes_bare').insert(message()).run()
  const create = () => logged.create([message()], {})
  const writeRows = []
  for (const writers of [1, 16]) {
    const rates: [number[], number[]] = [[], []]
    const ratios: number[] = []
    for (let round = 0; round < WRITE_ROUNDS; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0]
      const rate: number[] = []
      for (const index of order) rate[index] = await concurrently(index === 0 ? bare : create, writers, 0.5)
      rates[0].push(rate[0]!)
      rates[1].push(rate[1]!)
      ratios.push(rate[1]! / rate[0]!)
    }
    writeRows.push({
      writers,
      'bare insert/s': median(rates[0]),
      'store create + event log/s': median(rates[1]),
      'logged ÷ bare ratio': median(ratios),
      'rounds (ratio)': `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`,
      'load average': loadavg()[0]!
    })
  }
  printTable(
    `Durable writes: bare inserts vs store creates with the event log (${shown}, median of ${WRITE_ROUNDS} rounds)`,
    writeRows
  )
  writeResults('rethinkdb-writes', writeRows)

  // What one writer can reach at all: the same writes as query shapes, one at a time, interleaved.
  const shapes: { shape: string; write: () => Promise<unknown> }[] = [
    { shape: 'bare insert (one hard flush)', write: bare },
    {
      shape: 'record and a log row in one insert into one table (one flush)',
      write: () =>
        table('writes_one')
          .insert([message(), { log: true, events: [{ record: message() }] }])
          .run()
    },
    {
      shape: 'record, then a log row in another table, one query (two flushes)',
      write: () =>
        table('writes_two')
          .insert(message())
          .do(() => table('writes_log').insert({ events: [{ record: message() }] }))
          .run()
    },
    { shape: 'store create with the event log', write: create }
  ]
  const latencies = shapes.map((): number[] => [])
  for (const end = performance.now() + 20_000; performance.now() < end;) {
    for (const index of shuffled(shapes.map((_, index) => index))) {
      const start = performance.now()
      await shapes[index]!.write()
      latencies[index]!.push(performance.now() - start)
    }
  }
  const means = latencies.map((values) => values.reduce((sum, value) => sum + value, 0) / values.length)
  const limitRows = shapes.map(({ shape }, index) => ({
    'one writer, one query of': shape,
    'writes/s': 1000 / means[index]!,
    'median ms': median(latencies[index]!),
    '÷ bare ratio': means[0]! / means[index]!
  }))
  printTable(
    `One writer: query shapes interleaved one write at a time for 20 s (${shown}, load average ${loadavg()[0]!.toFixed(1)})`,
    limitRows
  )
  writeResults('rethinkdb-write-shapes', limitRows)
  await logged.close()
}

/**
 * Keyed creates (an idempotency key each, as the idempotency module hands them over) against unkeyed ones, both
 * through the store with the event log: one writer, the two alternating write by write for `seconds` (the ratio of
 * medians of the write times); and 16 writers, rounds of 0.5 s per side interleaved (the median of the rounds'
 * ratios of time per write). Goal (issue 40): keyed ≤ 1.1× the time of unkeyed.
 */
async function keyedCreates(seconds = 20): Promise<void> {
  const store = new RethinkDbStore({ r, db, table: 'writes_keyed' })
  await store.init()
  let serial = 0
  const message = () => ({ n: serial++, text: 'a message of some length', at: Date.now() })
  const unkeyed = () => store.create([message()], {})
  const keyed = () => {
    const key = `bench ${randomBytes(8).toString('hex')}`
    const idempotency = { scoped: () => key, fingerprint: 'f', retentionMs: 60_000, waitMs: 5_000 }
    return store.create([message()], {}, { idempotency })
  }
  await keyed()
  const times: [number[], number[]] = [[], []]
  for (let end = performance.now() + seconds * 1000, n = 0; performance.now() < end; n++) {
    const index = n % 2
    const start = performance.now()
    await (index === 0 ? unkeyed : keyed)()
    times[index]!.push(performance.now() - start)
  }
  const rows: Record<string, string | number>[] = [
    {
      writers: 1,
      'unkeyed ms (median)': median(times[0]),
      'keyed ms (median)': median(times[1]),
      'keyed ÷ unkeyed time': median(times[1]) / median(times[0]),
      rounds: `${times[0].length} + ${times[1].length} writes, alternating`
    }
  ]
  const ratios: number[] = []
  const rates: [number[], number[]] = [[], []]
  for (let round = 0; round < WRITE_ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0]
    const rate: number[] = []
    for (const index of order) rate[index] = await concurrently(index === 0 ? unkeyed : keyed, 16, 0.5)
    rates[0].push(rate[0]!)
    rates[1].push(rate[1]!)
    ratios.push(rate[0]! / rate[1]!)
  }
  rows.push({
    writers: 16,
    'unkeyed ms (median)': 1000 / median(rates[0]),
    'keyed ms (median)': 1000 / median(rates[1]),
    'keyed ÷ unkeyed time': median(ratios),
    rounds: `${WRITE_ROUNDS} rounds, ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`
  })
  printTable(`Keyed vs unkeyed creates with the event log (${shown}, load average ${loadavg()[0]!.toFixed(1)})`, rows)
  writeResults('rethinkdb-keyed-creates', rows)
  await store.close()
}

function shuffled<T>(values: T[]): T[] {
  for (let index = values.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1))
    ;[values[index], values[other]] = [values[other]!, values[index]!]
  }
  return values
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

function recordCount(setting: string | undefined): number {
  if (setting === undefined || setting === '') return 10_000
  const count = Number(setting.replace(/_/g, ''))
  if (!Number.isSafeInteger(count) || count < 5_000)
    throw new Error(`BENCH_RECORDS must be an integer of at least 5000, got '${setting}'`)
  return count
}
