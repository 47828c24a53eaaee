import { fork, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'

/** Every child a benchmark forked, killed if the benchmark exits without stopping them. */
export const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/**
 * A server of bench/support/scale-server.ts in a process of its own (`--expose-gc`, NODE_ENV=production):
 * `kind` is plumage, feathers or socketio; it answers `{ id, type, ...fields }` with `{ id, value }` over IPC,
 * and announces its url and a JWT (id 0) once listening. `benchDir` is the folder of the bundled benchmark
 * (dist/bench), beside which the bundled server is. SCALE_SERVER_ARGS adds node options (e.g. `--cpu-prof`).
 */
export class ScaleServer {
  private nextId = 1
  private readonly waiting = new Map<number, (value: unknown) => void>()
  readonly child: ChildProcess
  readonly started: Promise<{ url: string; token: string }>

  constructor(
    benchDir: string,
    readonly kind: string
  ) {
    this.child = fork(join(benchDir, 'support', 'scale-server.mjs'), [], {
      execArgv: ['--expose-gc', ...(process.env.SCALE_SERVER_ARGS ?? '').split(' ').filter(Boolean)],
      env: { ...process.env, SCALE_SERVER: kind, NODE_ENV: 'production' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    children.add(this.child)
    this.started = new Promise((resolve) => this.waiting.set(0, resolve as (value: unknown) => void))
    this.child.on('message', (message: { id: number; value: unknown }) => {
      this.waiting.get(message.id)?.(message.value)
      this.waiting.delete(message.id)
    })
  }

  ask<T>(type: string, fields: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++
    const answer = new Promise<T>((resolve) => this.waiting.set(id, resolve as (value: unknown) => void))
    this.child.send({ id, type, ...fields })
    return answer
  }

  /** SIGTERM first, so a server run under `--cpu-prof` writes its profile; SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const exited = new Promise((resolve) => this.child.once('exit', resolve))
    this.child.kill('SIGTERM')
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
}

/** The `p` quantile (0–1) of `values`, NaN when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = Float64Array.from(values).sort()
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

export const median = (values: number[]): number => percentile(values, 0.5)
