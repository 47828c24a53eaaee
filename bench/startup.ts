/**
 * `npm run bench:startup`: cold start and idle memory of the server `npm start` runs, on the memory store
 * (issue 36: cold start to `/health` ≤ 250 ms, idle RSS ≤ 50 MB, medians of 10; issue 25 had 400 ms and 75 MB).
 *
 * Each spawn is the process `npm start` runs, `node scripts/start.mjs` (it reads .env, checks the build is
 * up to date and imports dist/plumage.mjs; npm's own CLI in front of it is left out), with
 * NODE_ENV=production, STORE=memory and a free port. The clock runs from spawn to the first 200 on
 * `GET /health` (polled every 2 ms). Then the server is left alone until it used no CPU for 100 ms, and
 * its RSS is read twice: as it is (idle RSS) and after a full GC (asked over IPC through the same
 * preload the other benchmarks use; the preload imports nothing). bench/run.mjs brings the build up to date
 * before the benchmark starts, so no spawn builds.
 *
 * NODE_EXTRA_CA_CERTS, when set in the environment (as on machines behind a TLS-inspecting proxy), makes every
 * `node` parse that file and Node's own ~140 root certificates before it runs any JavaScript: on the benchmark
 * machine (150 certificates) ~37 % of the instructions to the first answer, nothing plumage can skip. The spawns then
 * alternate with it and without it, and both are reported; the goal is judged on both.
 *
 * The floor: a bare express 5 + socket.io hello world (bench/support/hello-floor.ts), bundled with the server's own
 * esbuild settings and spawned the same way, interleaved with plumage's spawns (it has no scripts/start.mjs in front:
 * plumage's row includes that script's build check, ~35 ms of CPU). Plumage's cost of its own is the difference.
 *
 * BENCH_SPAWNS: how many spawns (default 10; each way when NODE_EXTRA_CA_CERTS is set). BENCH_PROFILE=1 writes
 * a `--cpu-prof` of each spawn's startup to dist/bench/profiles (the server exits normally on SIGTERM, which writes
 * the profile).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { loadText } from './support/report.js'
import { collectGarbage, cpuTicks, HOOK_ARGS, memoryOf, waitIdle } from './support/servers.js'
import { freePort, probe } from './support/processes.js'

const SPAWNS = Number(process.env.BENCH_SPAWNS ?? 10)
const PROFILE = process.env.BENCH_PROFILE === '1'
const GOAL_MS = 250
const GOAL_MB = 50
const root = fileURLToPath(new URL('../..', import.meta.url))
const start = fileURLToPath(new URL('../../scripts/start.mjs', import.meta.url))
const profiles = fileURLToPath(new URL('./profiles', import.meta.url))
const floorDir = fileURLToPath(new URL('./floor', import.meta.url))
const floor = join(floorDir, 'hello-floor.mjs')

/** Bundles the floor with dist/plumage.mjs's esbuild settings (the same packages bundled, the same banner). */
async function buildFloor(): Promise<void> {
  const { build } = await import('esbuild')
  const { serverOptions } = (await import(pathToFileURL(join(root, 'scripts', 'build-options.mjs')).href)) as {
    serverOptions(outfile: string): Record<string, unknown>
  }
  await build({
    ...serverOptions(floor),
    entryPoints: [join(root, 'bench', 'support', 'hello-floor.ts')],
    sourcemap: false
  })
}

interface Spawned {
  /** Spawn → first 200 on /health, ms. */
  ms: number
  /** CPU time (user + system) the server used until then, ms: less sensitive to a busy machine than the clock. */
  cpu: number
  /** RSS once idle, MB. */
  idle: number
  /** RSS after a full GC, MB. */
  collected: number
}

async function startOnce(withExtraCaCerts: boolean, script = start): Promise<Spawned> {
  const port = await freePort()
  const args = [...HOOK_ARGS, ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []), script]
  const started = performance.now()
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: {
      ...(withExtraCaCerts ? process.env : withoutExtraCaCerts),
      NODE_ENV: 'production',
      STORE: 'memory',
      AUTH_SECRET: 'bench-startup-secret-0123456789',
      PORT: String(port),
      HOST: '127.0.0.1'
    }
  })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${script} exited with ${code} before /health answered 200:\n${stderr}`)
  })
  exited.catch(() => undefined)
  try {
    while ((await Promise.race([probe(port, '/health'), exited])) !== 200)
      await new Promise((resolve) => setTimeout(resolve, 2))
    const ms = performance.now() - started
    const cpu = cpuTicks(child.pid!) * 10
    await waitIdle(child.pid!, 5_000)
    const idle = memoryOf(child.pid!).rss
    await collectGarbage(child)
    return { ms, cpu, idle, collected: memoryOf(child.pid!).rss }
  } finally {
    await stop(child)
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exit = once(child, 'exit')
  // SIGTERM lets a profiled server write its profile on the way out; the others need not wait for it.
  child.kill(PROFILE ? 'SIGTERM' : 'SIGKILL')
  await exit
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length / 2
  return sorted.length % 2 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
const range = (values: number[], digits: number) =>
  `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`
const verdict = (met: boolean) => (met ? 'met' : 'NOT met')

const extraCaCerts = process.env.NODE_EXTRA_CA_CERTS
const withoutExtraCaCerts = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => name !== 'NODE_EXTRA_CA_CERTS')
)
const ways = extraCaCerts ? [true, false] : [true]
const label = (withExtraCaCerts: boolean) =>
  !extraCaCerts ? '' : withExtraCaCerts ? ` with NODE_EXTRA_CA_CERTS=${extraCaCerts}` : ' without NODE_EXTRA_CA_CERTS'

console.log(
  `npm start's server on memory: ${SPAWNS} spawns of scripts/start.mjs, interleaved with ${SPAWNS} of the floor ` +
    `(express + socket.io hello world)   [load ${loadText()}]`
)
await buildFloor()
const runs = new Map<string, Spawned[]>()
const key = (script: string, way: boolean) => `${script === floor ? 'floor' : 'plumage'}${label(way)}`
for (let index = 0; index < SPAWNS; index++) {
  const scripts = index % 2 ? [floor, start] : [start, floor]
  for (const way of index % 2 ? [...ways].reverse() : ways) {
    for (const script of scripts) {
      const run = await startOnce(way, script)
      runs.set(key(script, way), [...(runs.get(key(script, way)) ?? []), run])
      console.log(
        `  spawn ${index + 1} ${key(script, way)}: ${run.ms.toFixed(0)} ms to /health (${run.cpu} ms CPU), idle RSS ` +
          `${run.idle.toFixed(1)} MB, after GC ${run.collected.toFixed(1)} MB`
      )
    }
  }
}
const measures: [string, (run: Spawned) => number, number, string, number | undefined][] = [
  ['cold start to first 200 on /health', (run) => run.ms, 0, 'ms', GOAL_MS],
  ['CPU time used until then', (run) => run.cpu, 0, 'ms', undefined],
  ['idle RSS', (run) => run.idle, 1, 'MB', GOAL_MB],
  ['idle RSS after a full GC', (run) => run.collected, 1, 'MB', GOAL_MB]
]
for (const way of ways) {
  const [plumage, bare] = [runs.get(key(start, way))!, runs.get(key(floor, way))!]
  const rows = measures.map(([name, of, digits, unit, goal]) => {
    const [values, floorValues] = [plumage.map(of), bare.map(of)]
    const [value, floorValue] = [median(values), median(floorValues)]
    const judged = goal === undefined ? '| |' : `≤ ${goal} ${unit} | ${verdict(value <= goal)} |`
    return (
      `| ${name} | ${value.toFixed(digits)} ${unit} | ${range(values, digits)} ${unit} | ` +
      `${floorValue.toFixed(digits)} ${unit} (${range(floorValues, digits)}) | ${(value - floorValue).toFixed(digits)} ${unit} | ${judged}`
    )
  })
  console.log(
    `\n| median of ${SPAWNS}${label(way)} | plumage | range | floor (range) | plumage − floor | goal | |\n` +
      `|---|--:|--:|--:|--:|---|---|\n${rows.join('\n')}`
  )
}
console.log(
  `\nload average (1/5/15 min) at the end: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ')}${PROFILE ? `; profiles in ${profiles}` : ''}`
)
