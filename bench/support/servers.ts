import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export interface Target {
  name: string
  url: string
  pid: number
  /** Runs a full GC in the server (spawned with `--expose-gc` and the hook below) and resolves after it settled. */
  collectGarbage(): Promise<void>
  /** The server's CPU time so far (user + system, all threads), µs, from its own `process.cpuUsage()`. */
  cpuUsage(): Promise<number>
  /** Kills the server (SIGKILL unless told; a server that handles SIGTERM exits normally on it). */
  stop(signal?: NodeJS.Signals): Promise<void>
}

/**
 * Preloaded into every benchmarked server so idle RSS can be read after a real GC, not after
 * whatever garbage startup left behind, and CPU time read to the microsecond (/proc counts 10 ms ticks).
 * Asked over the IPC channel; it imports nothing.
 */
const GC_HOOK =
  'data:text/javascript,' +
  encodeURIComponent(
    "process.on('message', (m) => { if (m === 'gc') { globalThis.gc(); globalThis.gc(); setTimeout(() => process.send('gc-done'), 200) } " +
      "else if (m === 'cpu') { const u = process.cpuUsage(); process.send({ cpu: u.user + u.system }) } })"
  )

/** Node arguments that load the GC hook; the cold-start measurement uses them too, so both apps pay the same. */
export const HOOK_ARGS = ['--expose-gc', `--import=${GC_HOOK}`]

/** Runs a bundled server script (built beside this file) in its own process and waits for READY. */
export async function startTarget(
  name: string,
  script: string,
  env: Record<string, string> = {},
  nodeArgs: string[] = []
): Promise<Target> {
  const args = [...HOOK_ARGS, ...nodeArgs, fileURLToPath(new URL(script, import.meta.url))]
  const child: ChildProcess = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: { ...process.env, NODE_ENV: 'production', ...env }
  })
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = /^READY (\d+)$/.exec(line)
    if (match) {
      child.stdout!.resume()
      return {
        name,
        url: `http://127.0.0.1:${match[1]}`,
        pid: child.pid!,
        collectGarbage: () => collectGarbage(child),
        cpuUsage: () => cpuUsage(child),
        async stop(signal = 'SIGKILL') {
          child.kill(signal)
          if (child.exitCode === null && child.signalCode === null) await once(child, 'exit')
        }
      }
    }
  }
  throw new Error(`${name} exited before it was ready`)
}

export async function collectGarbage(child: ChildProcess): Promise<void> {
  const done = new Promise<void>((resolve) => child.on('message', (message) => message === 'gc-done' && resolve()))
  child.send('gc')
  await done
}

async function cpuUsage(child: ChildProcess): Promise<number> {
  const reply = once(child, 'message')
  child.send('cpu')
  const [message] = (await reply) as [{ cpu: number }]
  return message.cpu
}

/** CPU time (user + system, in clock ticks) a process has used so far, from /proc/<pid>/stat. */
export function cpuTicks(pid: number): number {
  // The command name (field 2) may contain spaces; the fields after its closing parenthesis do not.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/**
 * Resolves once the process used at most one clock tick (~10 ms) of CPU in 100 ms, or after `maxMs`.
 * autocannon abandons requests in flight when a round ends; a server still working them off (bcrypt!)
 * would otherwise take CPU from whichever target is measured next.
 */
export async function waitIdle(pid: number, maxMs = 20_000): Promise<void> {
  const deadline = performance.now() + maxMs
  let before = cpuTicks(pid)
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    const now = cpuTicks(pid)
    if (now - before <= 1) return
    before = now
  }
}

/** Resident set size now (VmRSS) and its high-water mark since start (VmHWM), in MB, from /proc. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 }
}
