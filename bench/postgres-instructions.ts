/**
 * Instructions per call of bench:postgres's store workloads, through PostgresStore and by hand with `pg`
 * (bench/support/postgres-workloads.ts), counted by valgrind's callgrind in the client process. Both sides wait
 * on the same server, and on a busy machine their wall-clock times move by ±20 % from round to round; the
 * instructions the client spends per call do not. Run: `node bench/run.mjs postgres-instructions` (valgrind
 * installed, else it skips; POSTGRES_URL, else a throw-away server); `BENCH_WORKLOADS=get,patch` keeps the
 * workloads whose name holds one of the words. 2–4 minutes per workload and side.
 *
 * Each figure is the difference between a run of 2,100 calls and one of 100 (both after 3,000 warm-up calls),
 * divided by 2,000, so that starting node, connecting and warming up cancel out. After 300 warm-up calls (the
 * first form) V8 was still compiling and much of both sides still ran in its baseline tier, the store's larger
 * share of code more so: the page's store ÷ hand ratio read 1.23× there, 1.06× after 3,000. What V8's compilers
 * still do (named in callgrind's profile) is counted apart, and the ratio is taken on the rest; a 2,000-call
 * window keeps one garbage collection more or less in a run to a few hundred instructions per call.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { PostgresDatabase } from '../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../src/infrastructure/postgres/postgres-store-factory.js'
import { discoverPostgres } from '../test/support/postgres-server.js'
import { printTable, writeResults } from './support/measure.js'
import { peopleIndexes, postgresWorkloads } from './support/postgres-workloads.js'
import { peopleRecords, peopleSchema } from './support/seed.js'

const RECORDS = 10_000
const WARM_UP = 3_000
const [FEW, MANY] = [100, 2_100]
/** Functions of V8's compilers and parser, whose work depends on when tiers kick in rather than on the call. */
const COMPILING = /v8::internal::(compiler|maglev|baseline|interpreter|Scanner|Parser|AstValueFactory)|turboshaft/

interface Calls {
  url: string
  workload: number
  side: 'store' | 'hand'
  calls: number
  firstId: number
}

if (process.env.BENCH_CALLS) await makeCalls(JSON.parse(process.env.BENCH_CALLS) as Calls)
else await countInstructions()

/** In valgrind: the warm-up, then `calls` calls of one workload on one side. */
async function makeCalls({ url, workload, side, calls, firstId }: Calls): Promise<void> {
  const hand = new pg.Pool({ connectionString: url, max: 10 })
  const factory = new PostgresStoreFactory(new PostgresDatabase({ url }), { watch: false })
  const store = factory.create('people', { indexes: peopleIndexes, schema: peopleSchema })
  const chosen = postgresWorkloads(hand, firstId)[workload]!
  const call = side === 'store' ? () => chosen.store(store) : chosen.hand
  try {
    for (let i = 0; i < WARM_UP + calls; i++) await call()
  } finally {
    await factory.close()
    await hand.end()
  }
}

async function countInstructions(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    console.log('PostgreSQL instruction counts SKIPPED: valgrind is not installed (apt-get install valgrind)')
    return
  }
  const database = await discoverPostgres()
  if (!database) {
    console.log('PostgreSQL instruction counts SKIPPED: set POSTGRES_URL or install PostgreSQL')
    return
  }
  const folder = mkdtempSync(join(tmpdir(), 'plumage-callgrind-'))
  try {
    await seed(database.url)
    const words = process.env.BENCH_WORKLOADS?.split(',')
    const probe = new pg.Pool()
    const names = postgresWorkloads(probe, 0).map((workload) => workload.name)
    await probe.end()
    let firstId = RECORDS
    const table = []
    for (const [workload, name] of names.entries()) {
      if (words && !words.some((word) => name.includes(word))) continue
      const [hand, ours] = (['hand', 'store'] as const).map((side) => {
        const [few, many] = [FEW, MANY].map((calls) => {
          const counted = count(folder, { url: database.url, workload, side, calls, firstId })
          firstId += WARM_UP + calls
          return counted
        })
        return {
          all: (many!.all - few!.all) / (MANY - FEW),
          compiling: (many!.compiling - few!.compiling) / (MANY - FEW)
        }
      })
      table.push({
        workload: name,
        'hand k instr/call': hand!.all / 1000,
        'store k instr/call': ours!.all / 1000,
        'hand compiling k': hand!.compiling / 1000,
        'store compiling k': ours!.compiling / 1000,
        'store ÷ hand ratio': (ours!.all - ours!.compiling) / (hand!.all - hand!.compiling)
      })
    }
    printTable(
      `PostgresStore vs hand-written pg queries: client instructions per call (callgrind, ${MANY} − ${FEW} calls)`,
      table
    )
    writeResults('postgres-instructions', table)
  } finally {
    rmSync(folder, { recursive: true, force: true })
    await database.stop()
  }
}

/** The `people` table of bench:postgres, with its records and indexes. */
async function seed(url: string): Promise<void> {
  const factory = new PostgresStoreFactory(new PostgresDatabase({ url }), { watch: false })
  try {
    const store = factory.create('people', { indexes: peopleIndexes, schema: peopleSchema })
    await store.setup!()
    const records = peopleRecords(RECORDS)
    for (let i = 0; i < records.length; i += 1_000) await store.create(records.slice(i, i + 1_000), {})
  } finally {
    await factory.close()
  }
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query('ANALYZE people')
  } finally {
    await admin.end()
  }
}

/** One run in callgrind: all its instructions, and those of V8's compilers. */
function count(folder: string, calls: Calls): { all: number; compiling: number } {
  const out = join(folder, 'callgrind.out')
  const run = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${out}`,
      process.execPath,
      fileURLToPath(import.meta.url)
    ],
    { env: { ...process.env, BENCH_CALLS: JSON.stringify(calls) }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }
  )
  if (run.status !== 0) throw new Error(`callgrind run failed (${run.status}): ${run.stderr.slice(-2000)}`)
  const annotated = spawnSync('callgrind_annotate', ['--threshold=100', out], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024
  })
  if (annotated.status !== 0) throw new Error(`callgrind_annotate failed: ${annotated.stderr}`)
  let all = 0
  let compiling = 0
  for (const line of annotated.stdout.split('\n')) {
    const match = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/.exec(line)
    if (!match) continue
    const instructions = Number(match[1]!.replaceAll(',', ''))
    if (match[2]!.startsWith('PROGRAM TOTALS')) all = instructions
    else if (COMPILING.test(match[2]!)) compiling += instructions
  }
  rmSync(out, { force: true })
  return { all, compiling }
}
