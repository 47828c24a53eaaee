import { build } from 'esbuild'
import { spawn, type ChildProcess } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

/*
 * The server as `npm start` runs it (src/main.ts compiled, in a child process). esbuild compiles it
 * in well under a second (tsc takes seconds per suite); packages stay external. Built into
 * node_modules/.cache so the output resolves the project's packages and no other run's dist/ is touched.
 */
const root = process.cwd()

export interface BuiltServer {
  /** Starts dist main.js on 127.0.0.1:0 and resolves once it logged "plumage started". */
  start(env?: Record<string, string>): Promise<StartedServer>
  /** Kills a child still running and removes the build. */
  cleanup(): Promise<void>
}

export interface StartedServer {
  child: ChildProcess
  port: number
  logs: AsyncIterator<string>
  exited: Promise<number | null>
}

/** Compiles src/main.ts to `<outDir>/src/main.js` and returns that path. */
export async function buildMain(name: string): Promise<{ main: string; outDir: string }> {
  const outDir = join(root, 'node_modules', '.cache', `plumage-${name}-${process.pid}`)
  const main = join(outDir, 'src', 'main.js')
  await build({
    entryPoints: [join(root, 'src', 'main.ts')], outfile: main, bundle: true, packages: 'external',
    platform: 'node', format: 'esm', target: 'node20', logLevel: 'error'
  })
  return { main, outDir }
}

export async function buildServer(name: string): Promise<BuiltServer> {
  const { main, outDir } = await buildMain(name)
  const children: ChildProcess[] = []
  return {
    async start(env = {}) {
      const child = spawn(process.execPath, [main], {
        env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'test', REQUEST_LOG: 'false', ...env },
        stdio: ['ignore', 'pipe', 'inherit']
      })
      children.push(child)
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
      const logs = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
      for (let line = await logs.next(); !line.done; line = await logs.next()) {
        const entry = JSON.parse(line.value) as { msg: string; url?: string }
        if (entry.msg === 'plumage started') return { child, port: Number(new URL(entry.url!).port), logs, exited }
      }
      throw new Error('the server exited before logging "plumage started"')
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
