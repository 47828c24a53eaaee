import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { get } from 'node:http'
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'

/*
 * Child processes of `npm run bench:realtime` (app instances, redis-server, postgres): every one is tracked, so the
 * driver can kill whatever is left on any way out, failures included.
 */
const children = new Set<ChildProcess>()

/** SIGKILLs every child still running; synchronous, so it also works in process.on('exit'). */
export function killChildren(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}

/** Tracks a child spawned elsewhere (bench/support/postgres.ts), so killChildren() reaches it too. */
export function track(child: ChildProcess): ChildProcess {
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

/** Stops one child by its PID: `signal` first, SIGKILL after `graceMs`. */
export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 3_000
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill(signal)
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

export interface Started<T> {
  child: ChildProcess
  value: T
}

/**
 * Spawns `command` (stdout piped, stderr shared) and resolves once `pick` returns a value for a line of
 * its stdout; rejects (and kills the child) when it exits first or `timeoutMs` passes. Later stdout lines
 * go to `after`, or are drained.
 */
export function startChild<T>(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  pick: (line: string) => T | undefined,
  { timeoutMs = 60_000, after }: { timeoutMs?: number; after?: (line: string) => void } = {}
): Promise<Started<T>> {
  const child = track(spawn(command, args, { env, stdio: ['ignore', 'pipe', 'inherit'] }))
  const lines = createInterface({ input: child.stdout! })
  return new Promise((resolve, reject) => {
    let ready = false
    const fail = (error: Error) => {
      if (ready) return
      ready = true
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(error)
    }
    const timer = setTimeout(() => fail(new Error(`${name} was not ready within ${timeoutMs / 1000} s`)), timeoutMs)
    child.once('error', (error) => fail(new Error(`${name} could not be started: ${error.message}`)))
    child.once('exit', (code, signal) =>
      fail(new Error(`${name} exited (${signal ?? `code ${code}`}) before it was ready`))
    )
    lines.on('line', (line) => {
      if (ready) {
        after?.(line)
        return
      }
      const value = pick(line)
      if (value === undefined) return
      ready = true
      clearTimeout(timer)
      resolve({ child, value })
    })
  })
}

/** A TCP port free on 127.0.0.1 right now (for servers that cannot report the port they picked). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** The status of one `GET path` on 127.0.0.1, or 0 while nothing listens yet (for polling a starting server). */
export function probe(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const request = get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      response.resume()
      resolve(response.statusCode ?? 0)
    })
    request.on('error', () => resolve(0))
  })
}

/** True when `command --version` runs (the binary is installed and on PATH). */
export function hasCommand(command: string): boolean {
  const result = spawnSync(command, ['--version'], { stdio: 'ignore' })
  return !result.error && result.status === 0
}
