import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { collectGarbage, HOOK_ARGS, memoryOf } from './servers.js'
import { freePort, probe } from './processes.js'

export interface ColdStart {
  /** Spawn → first HTTP response, in ms. */
  ms: number
  /** Status of that response (401 for both reference apps: `messages` needs a token). */
  status: number
  /** RSS in MB once started and a full GC settled. */
  idleRss: number
}

/**
 * Spawns `node <script>` listening on a free port and polls `GET /messages` every 2 ms until any
 * HTTP response arrives: the server has loaded, wired its app and answered through the whole
 * pipeline (a 401 from the authenticate hook counts). Then reads its idle RSS after a full GC.
 */
export async function coldStart(script: string, env: Record<string, string>): Promise<ColdStart> {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(process.execPath, [...HOOK_ARGS, script], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' }
  })
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${script} exited with ${code} before answering`)
  })
  exited.catch(() => undefined)
  try {
    let status = 0
    while (status === 0) {
      status = await Promise.race([probe(port, '/messages'), exited])
      if (status === 0) await new Promise((resolve) => setTimeout(resolve, 2))
    }
    const ms = performance.now() - started
    await collectGarbage(child)
    return { ms, status, idleRss: memoryOf(child.pid!).rss }
  } finally {
    child.kill('SIGKILL')
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit')
  }
}
