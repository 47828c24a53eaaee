import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { join } from 'node:path'

/** One line of the table: absolute figures per target and how plumage compares. */
export interface Row {
  name: string
  unit: string
  /** plumage on its default HTTP engine, express. */
  plumage: number
  feathers: number
  express?: number
  /** plumage with HTTP=fastify. */
  fastify?: number
  /** The raw fastify floor (bench/support/fastify-server.ts). */
  rawFastify?: number
  /** Higher is better (throughput) or lower is better (latency, time, memory). */
  better: 'higher' | 'lower'
  /** Human-readable goal, e.g. '≥ 1.25× Feathers'; checked by `met`. */
  goal?: string
  met?: (row: Row) => boolean
  /** The goal of plumage on fastify, e.g. '≥ 3× Feathers, ≥ 0.8× raw fastify'; checked by `fastifyMet`. */
  fastifyGoal?: string
  fastifyMet?: (row: Row) => boolean
}

export interface Machine {
  cpus: string
  cores: number
  memoryGb: number
  node: string
  /** os.loadavg() (1, 5, 15 min) at each named point of the run. */
  load: Record<string, number[]>
}

export function machine(): Machine {
  const list = cpus()
  return {
    cpus: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGb: totalmem() / 2 ** 30,
    node: process.version,
    load: {}
  }
}

export const loadText = (load = loadavg()) => load.map((value) => value.toFixed(2)).join(' / ')

const format = (value: number | undefined) =>
  value === undefined || Number.isNaN(value)
    ? '—'
    : value >= 100
      ? Math.round(value).toLocaleString('en-US')
      : value.toFixed(1)
const ratio = (ours: number, theirs: number | undefined) =>
  theirs === undefined || !theirs ? '—' : `${(ours / theirs).toFixed(2)}×`

/** The results as a Markdown table (printed, saved, and kept in BENCHMARKS.md). */
export function markdown(rows: Row[], info: Machine, settings: string): string {
  const lines = [
    '| workload | unit | plumage (express) | plumage (fastify) | Feathers v5 | raw express | raw fastify | plumage ÷ Feathers | plumage ÷ express | goal | met | plumage (fastify) ÷ Feathers | plumage (fastify) ÷ raw fastify | fastify goal | met |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|---|:-:|--:|--:|---|:-:|'
  ]
  const mark = (check?: (row: Row) => boolean, row?: Row) => (check && row ? (check(row) ? '✅' : '❌') : '')
  for (const row of rows) {
    const fastify =
      row.fastify === undefined ? ['—', '—'] : [ratio(row.fastify, row.feathers), ratio(row.fastify, row.rawFastify)]
    lines.push(
      `| ${row.name} | ${row.unit} | ${format(row.plumage)} | ${format(row.fastify)} | ${format(row.feathers)} | ${format(row.express)} | ${format(row.rawFastify)} | ` +
        `${ratio(row.plumage, row.feathers)} | ${ratio(row.plumage, row.express)} | ${row.goal ?? ''} | ${mark(row.met, row)} | ` +
        `${fastify[0]} | ${fastify[1]} | ${row.fastifyGoal ?? ''} | ${mark(row.fastifyMet, row)} |`
    )
  }
  const load = Object.entries(info.load)
    .map(([point, values]) => `${point} ${loadText(values)}`)
    .join('; ')
  return [
    lines.join('\n'),
    '',
    `Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (the end of the run).`,
    `Machine: ${info.cores} × ${info.cpus}, ${info.memoryGb.toFixed(1)} GB, Node ${info.node}. ${settings}`,
    `Load average (1/5/15 min): ${load}.`
  ].join('\n')
}

/** Writes bench/results/<stamp>.json and .md; a full run also replaces the table in BENCHMARKS.md. */
export function save(rows: Row[], info: Machine, settings: string, { quick }: { quick: boolean }): string[] {
  const stamp =
    new Date()
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z') + (quick ? '-quick' : '')
  const dir = join(process.cwd(), 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const table = markdown(rows, info, settings)
  const json = rows.map(({ met, fastifyMet, ...row }) => ({
    ...row,
    ratioVsFeathers: row.plumage / row.feathers,
    ratioVsExpress: row.express ? row.plumage / row.express : null,
    met: met?.(row) ?? null,
    fastifyRatioVsFeathers: row.fastify === undefined ? null : row.fastify / row.feathers,
    fastifyRatioVsRawFastify: row.fastify === undefined || !row.rawFastify ? null : row.fastify / row.rawFastify,
    fastifyMet: fastifyMet?.(row) ?? null
  }))
  writeFileSync(
    join(dir, `${stamp}.json`),
    JSON.stringify({ date: new Date().toISOString(), quick, settings, machine: info, rows: json }, null, 2) + '\n'
  )
  writeFileSync(join(dir, `${stamp}.md`), `# npm run bench — ${new Date().toISOString()}\n\n${table}\n`)
  const written = [`bench/results/${stamp}.json`, `bench/results/${stamp}.md`]
  if (!quick && replaceSection('latest-run', table)) written.push('BENCHMARKS.md')
  return written
}

/**
 * Replaces what stands between `<!-- <marker>:start -->` and `<!-- <marker>:end -->` in BENCHMARKS.md
 * with `content`; false when the file or the markers are missing.
 */
export function replaceSection(marker: string, content: string): boolean {
  const doc = join(process.cwd(), 'BENCHMARKS.md')
  if (!existsSync(doc)) return false
  const start = `<!-- ${marker}:start -->`
  const end = `<!-- ${marker}:end -->`
  const text = readFileSync(doc, 'utf8')
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from < 0 || to < from) return false
  writeFileSync(doc, `${text.slice(0, from + start.length)}\n${content}\n${text.slice(to)}`)
  return true
}
