/**
 * `npm run bench:live-oracle`: issue 39's differential oracle at full size — 1,000 live queries of varied shapes and
 * 100,000 random creates, patches and removes with forced disconnects, every live list equal to a fresh `find` by
 * its user at every quiet point — on memory (one instance, test/modules/live/live-oracle.test.ts), on two instances
 * of one PostgreSQL database (live-oracle-postgres.test.ts: a throw-away server from Debian's binaries, or
 * POSTGRES_URL) and on two of one RethinkDB (live-oracle-rethinkdb.test.ts: RETHINKDB_BIN or RETHINKDB_URL). CI runs
 * the same suites at a small size; this runs them at the issue's, one store after another (each has the machine),
 * and reports each one's summary line: queries, writes, quiet points, cuts, divergences, resets, its time.
 *
 * BENCH_ORACLE_QUERIES and BENCH_ORACLE_WRITES change the size (a full-size run rewrites the table in
 * BENCHMARKS.md); BENCH_ORACLE_STORES picks stores (memory,postgres,rethinkdb). A store whose suite skips (no
 * server) is reported as skipped. Every run writes bench/results/<time>-live-oracle.md.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadText, replaceSection } from './support/report.js'

const QUERIES = Number(process.env.BENCH_ORACLE_QUERIES ?? 1_000)
const WRITES = Number(process.env.BENCH_ORACLE_WRITES ?? 100_000)
const STORES = (process.env.BENCH_ORACLE_STORES ?? 'memory,postgres,rethinkdb').split(',')

const suites: Record<string, { file: string; env: Record<string, string> }> = {
  memory: {
    file: 'test/modules/live/live-oracle.test.ts',
    env: { LIVE_ORACLE_QUERIES: String(QUERIES), LIVE_ORACLE_WRITES: String(WRITES) }
  },
  postgres: {
    file: 'test/modules/live/live-oracle-postgres.test.ts',
    env: { LIVE_ORACLE_PG_QUERIES: String(QUERIES), LIVE_ORACLE_PG_WRITES: String(WRITES) }
  },
  rethinkdb: {
    file: 'test/modules/live/live-oracle-rethinkdb.test.ts',
    env: { LIVE_ORACLE_RDB_QUERIES: String(QUERIES), LIVE_ORACLE_RDB_WRITES: String(WRITES) }
  }
}

interface Outcome {
  store: string
  result: 'passed' | 'failed' | 'skipped'
  summary: string
  seconds: number
  load: string
}

/** One store's suite in its own jest process, its output passed through; its summary line and outcome. */
async function run(store: string): Promise<Outcome> {
  const suite = suites[store]
  if (!suite) throw new Error(`unknown store ${store} (BENCH_ORACLE_STORES: memory,postgres,rethinkdb)`)
  const began = Date.now()
  const child = spawn(process.execPath, ['node_modules/jest/bin/jest.js', '-i', suite.file], {
    env: {
      ...process.env,
      ...suite.env,
      LIVE_ORACLE_PROGRESS: '1',
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  const take = (chunk: Buffer) => {
    output += chunk.toString()
    process.stdout.write(chunk)
  }
  child.stdout.on('data', take)
  child.stderr.on('data', take)
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  // The suite's summary line, or the first line of its failure.
  const summary =
    /live oracle[^\n]*divergences[^\n]*/.exec(output)?.[0]?.trim() ??
    /● (?!Console)[^\n]*\n\s*\n\s*([^\n]+)/.exec(output)?.[1]?.trim() ??
    '—'
  const skipped = /Tests:\s+\d+ skipped, \d+ total/.test(output) && !/passed|failed/.test(summary)
  return {
    store,
    result: skipped ? 'skipped' : code === 0 ? 'passed' : 'failed',
    summary,
    seconds: Math.round((Date.now() - began) / 1000),
    load: loadText()
  }
}

const outcomes: Outcome[] = []
for (const store of STORES) outcomes.push(await run(store.trim()))
const full = QUERIES === 1_000 && WRITES === 100_000
const text = [
  `${QUERIES.toLocaleString('en-US')} live queries, ${WRITES.toLocaleString('en-US')} random writes per store (${new Date().toISOString().slice(0, 10)}):`,
  '',
  '| store | result | summary | time | load after (1/5/15 min) |',
  '|---|---|---|--:|---|',
  ...outcomes.map((o) => `| ${o.store} | ${o.result} | ${o.summary} | ${o.seconds} s | ${o.load} |`)
].join('\n')
console.log(`\n${text}`)
const dir = join(process.cwd(), 'bench', 'results')
mkdirSync(dir, { recursive: true })
const stamp = new Date().toISOString().replace(/:/g, '-').replace(/\..*/, 'Z')
writeFileSync(join(dir, `${stamp}-live-oracle.md`), `# npm run bench:live-oracle\n\n${text}\n`)
const written = [`bench/results/${stamp}-live-oracle.md`]
if (full && replaceSection('live-oracle', text)) written.push('BENCHMARKS.md')
console.log(`written: ${written.join(', ')}`)
process.exit(outcomes.some((o) => o.result === 'failed') ? 1 : 0)
