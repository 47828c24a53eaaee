/**
 * RethinkDbStore overhead: the same finds and writes through the store (AST → ReQL, type guards,
 * id fallbacks, projections) and as hand-written rethinkdb-ts queries, against one server in the
 * same run. Run: `RETHINKDB_URL=rethinkdb://127.0.0.1:28015 node bench/run.mjs rethinkdb`
 * (skips, exit 0, when no server answers); `BENCH_RECORDS=100000` sets the table size (default
 * 10,000). Works in a throw-away database that it drops.
 */
import { randomBytes } from 'node:crypto'
import type { StoreQuery } from '../src/domain/query/ast.js'
import { parseQuery } from '../src/domain/query/parse-query.js'
import { connectRethinkDb, type RethinkDbConnection } from '../src/infrastructure/rethinkdb/rethinkdb-connection.js'
import { RethinkDbStore } from '../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { measure, printTable, writeResults } from './support/measure.js'
import { peopleRecords } from './support/seed.js'

const RECORDS = recordCount(process.env.BENCH_RECORDS)
const url = process.env.RETHINKDB_URL ?? 'rethinkdb://127.0.0.1:28015'

let connection: RethinkDbConnection
try {
  connection = await connectRethinkDb(url, { timeoutMs: 3_000 })
} catch {
  console.log(`RethinkDB benchmark SKIPPED: no server answers at ${url} (set RETHINKDB_URL or start one: docker compose up rethinkdb)`)
  process.exit(0)
}

const { r } = connection
const db = `plumage_bench_${randomBytes(4).toString('hex')}`
const records = peopleRecords(RECORDS)

const q = (raw: Record<string, unknown>): StoreQuery => parseQuery(raw, { operators: ['$search', '$contains'] })

try {
  const store = new RethinkDbStore({ r, db, table: 'people', watch: false })
  await store.init()
  const table = store.table()
  for (let i = 0; i < records.length; i += 1_000) await table.insert(records.slice(i, i + 1_000)).run()

  let next = RECORDS
  // `same`: how to tell that both ways answered the same (unsorted limits may pick different rows).
  const workloads: { name: string; store: () => Promise<unknown>; hand: () => Promise<unknown>; same?: (ours: unknown, theirs: unknown) => boolean }[] = [
    {
      name: 'find: equality, limit 50',
      store: () => store.find(q({ city: 'Berlin', $limit: 50 })),
      hand: () => table.filter({ city: 'Berlin' }).limit(50).run(),
      same: (ours, theirs) => [ours, theirs].every((rows) => Array.isArray(rows) && rows.length === 50 && rows.every((row) => row.city === 'Berlin'))
    },
    {
      name: 'find: $in + $gte + 2-key sort + limit 10',
      store: () => store.find(q({ city: { $in: ['Rome', 'Oslo'] }, age: { $gte: 30 }, $sort: { age: -1, name: 1, id: 1 }, $limit: 10 })),
      hand: () => table.filter((row) => r.expr(['Rome', 'Oslo']).contains(row('city')).and(row('age').ge(30)))
        .orderBy(r.desc('age'), r.asc('name'), r.asc('id')).limit(10).run(),
      same: (ours, theirs) => JSON.stringify(ours) === JSON.stringify(theirs)
    },
    {
      name: 'page: total + 25 sorted by score',
      store: () => store.page(q({ city: 'Paris', $sort: { score: 1, id: 1 }, $limit: 25 })),
      hand: () => {
        const matches = table.filter({ city: 'Paris' })
        return r.expr({ total: matches.count(), data: matches.orderBy('score', 'id').limit(25).coerceTo('array') }).run()
      },
      same: (ours, theirs) => JSON.stringify(ours) === JSON.stringify(theirs)
    },
    {
      name: 'get by id',
      store: () => store.get(4242, q({})),
      hand: () => table.get(4242).run(),
      same: (ours, theirs) => JSON.stringify(ours) === JSON.stringify(theirs)
    },
    {
      name: 'create one',
      store: () => store.create([{ id: next++, name: 'new', age: 1, city: 'Oslo', score: 0 }], {}),
      hand: () => table.insert({ id: next++, name: 'new', age: 1, city: 'Oslo', score: 0 }, { returnChanges: true }).run()
    },
    {
      name: 'patch by id',
      store: () => store.patch(17, { score: Math.random() }, q({})),
      hand: () => table.get(17).update({ score: Math.random() }, { returnChanges: true }).run()
    }
  ]

  // Reads must answer the same records both ways, or the comparison means nothing.
  for (const workload of workloads) {
    if (workload.same && !workload.same(await workload.store(), await workload.hand())) throw new Error(`Results differ for '${workload.name}'`)
  }

  const rows = []
  for (const workload of workloads) {
    const anchor = await measure(workload.hand, { seconds: 2 })
    const candidate = await measure(workload.store, { seconds: 2 })
    rows.push({
      workload: workload.name,
      'hand-written ops/s': anchor.opsPerSecond,
      'RethinkDbStore ops/s': candidate.opsPerSecond,
      'overhead %': (anchor.opsPerSecond / candidate.opsPerSecond - 1) * 100
    })
  }
  printTable(`RethinkDbStore vs hand-written rethinkdb-ts queries (${RECORDS.toLocaleString()} records, ${url}, same run)`, rows)
  writeResults('rethinkdb', rows)
} finally {
  await r.dbDrop(db).run().catch(() => undefined)
  await connection.close()
}

function recordCount(setting: string | undefined): number {
  if (setting === undefined || setting === '') return 10_000
  const count = Number(setting.replace(/_/g, ''))
  if (!Number.isSafeInteger(count) || count < 5_000) throw new Error(`BENCH_RECORDS must be an integer of at least 5000, got '${setting}'`)
  return count
}
