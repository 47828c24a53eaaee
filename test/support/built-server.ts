import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { promisify } from 'node:util'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

/*
 * The server as `npm start` runs it: the bundle of scripts/build-server.mjs (under a second), in a
 * child process. Built into node_modules/.cache so the output resolves the project's packages and
 * no other run's dist/ is touched.
 */
const root = process.cwd()

export interface BuiltServer {
  /** The bundle's path. */
  main: string
  /** Starts the bundle on 127.0.0.1:0 and resolves once it logged "plumage started". */
  start(env?: Record<string, string>): Promise<StartedServer>
  /** Kills a child still running and removes the build. */
  cleanup(): Promise<void>
}

export interface StartedServer {
  child: ChildProcess
  port: number
  logs: AsyncIterator<string>
  /** The log lines written before "plumage started" (startup warnings). */
  startup: string[]
  exited: Promise<number | null>
}

/** Bundles the server as `npm run build` does, into `<outDir>/plumage.mjs`, and returns that path. */
export async function buildMain(name: string): Promise<{ main: string; outDir: string }> {
  const outDir = join(root, 'node_modules', '.cache', `plumage-${name}-${process.pid}`)
  const main = join(outDir, 'plumage.mjs')
  await promisify(execFile)(process.execPath, [join(root, 'scripts', 'build-server.mjs'), main], { cwd: root })
  return { main, outDir }
}

export async function buildServer(name: string): Promise<BuiltServer> {
  const { main, outDir } = await buildMain(name)
  const children: ChildProcess[] = []
  return {
    main,
    async start(env = {}) {
      const child = spawn(process.execPath, [main], {
        env: {
          ...process.env,
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          NODE_ENV: 'test',
          REQUEST_LOG: 'false',
          ...env
        },
        stdio: ['ignore', 'pipe', 'inherit']
      })
      children.push(child)
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
      const logs = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
      const startup: string[] = []
      for (let line = await logs.next(); !line.done; line = await logs.next()) {
        const entry = JSON.parse(line.value) as { msg: string; url?: string }
        if (entry.msg === 'plumage started')
          return { child, port: Number(new URL(entry.url!).port), logs, startup, exited }
        startup.push(line.value)
      }
      // What it logged before exiting says why (the process's stderr holds the one-line reason).
      throw new Error(`the server exited before logging "plumage started"; its log:\n${startup.slice(-10).join('\n')}`)
    },
    async cleanup() {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await rm(outDir, { recursive: true, force: true })
    }
  }
}

/** Reads the server's JSON log lines until one has `msg` equal to `message`. */
export async function nextLog(logs: AsyncIterator<string>, message: string): Promise<void> {
  for (let line = await logs.next(); !line.done; line = await logs.next()) {
    if ((JSON.parse(line.value) as { msg: string }).msg === message) return
  }
  throw new Error(`the server never logged "${message}"`)
}
