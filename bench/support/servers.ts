import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export interface Target {
  name: string
  url: string
  stop(): Promise<void>
}

/** Runs a bundled server script (built beside this file) in its own process and waits for READY. */
export async function startTarget(name: string, script: string): Promise<Target> {
  const child: ChildProcess = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url))], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' }
  })
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = /^READY (\d+)$/.exec(line)
    if (match) {
      return {
        name,
        url: `http://127.0.0.1:${match[1]}`,
        async stop() {
          child.kill('SIGKILL')
          if (child.exitCode === null) await once(child, 'exit')
        }
      }
    }
  }
  throw new Error(`${name} exited before it was ready`)
}
