import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

/*
 * The built server as `npm start` runs it, in a child process: SIGTERM must stop accepting, let the
 * request in flight finish, tear down and exit 0. Built into node_modules/.cache so the compiled files
 * still resolve the project's packages and no other run's dist/ is touched.
 */
const root = process.cwd()
const outDir = join(root, 'node_modules', '.cache', `plumage-shutdown-${process.pid}`)

beforeAll(async () => {
  // tsc still emits when files other engineers are editing fail to type-check; only main.js matters.
  await new Promise((resolve) => execFile('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', outDir], { cwd: root }, resolve))
  if (!existsSync(join(outDir, 'src', 'main.js'))) throw new Error(`tsc did not emit ${outDir}/src/main.js`)
}, 120_000)
let running: ChildProcess | undefined
afterAll(async () => {
  if (running && running.exitCode === null) running.kill('SIGKILL')
  await rm(outDir, { recursive: true, force: true })
})

function startServer(): Promise<{ child: ChildProcess; port: number; logs: AsyncIterator<string> }> {
  const child = spawn(process.execPath, [join(outDir, 'src', 'main.js')], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'test', REQUEST_LOG: 'false' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const logs = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  return (async () => {
    for (let line = await logs.next(); !line.done; line = await logs.next()) {
      const entry = JSON.parse(line.value) as { msg: string; url?: string }
      if (entry.msg === 'plumage started') return { child, port: Number(new URL(entry.url!).port), logs }
    }
    throw new Error('the server exited before logging "plumage started"')
  })()
}

async function nextLog(logs: AsyncIterator<string>, message: string): Promise<void> {
  for (let line = await logs.next(); !line.done; line = await logs.next()) {
    if ((JSON.parse(line.value) as { msg: string }).msg === message) return
  }
  throw new Error(`the server never logged "${message}"`)
}

describe('graceful shutdown of the built server', () => {
  it('finishes the request in flight, refuses new connections and exits 0 on SIGTERM', async () => {
    const { child, port, logs } = await startServer()
    running = child
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    const body = JSON.stringify({ text: 'in flight' })
    const socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    let response = ''
    socket.on('data', (chunk) => { response += String(chunk) })
    const closed = new Promise((resolve) => socket.once('close', resolve))
    // Headers and half the body: the request is in flight until the rest arrives.
    socket.write(`POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`)
    await new Promise((resolve) => setImmediate(resolve))

    child.kill('SIGTERM')
    await nextLog(logs, 'shutting down')
    // The listening socket closes within a few event-loop turns of the log line; try a bounded number of times.
    let refused = 'connected'
    for (let attempt = 0; attempt < 100 && refused === 'connected'; attempt++) {
      refused = await new Promise<string>((resolve) => {
        const late = connect(port, '127.0.0.1')
        late.once('connect', () => { late.destroy(); resolve('connected') })
        late.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'))
      })
    }
    expect(refused).toBe('ECONNREFUSED')

    socket.end(body.slice(5))
    await closed
    expect(response).toMatch(/^HTTP\/1\.1 (201|400|401) /)
    expect(response).toContain('Content-Type: application/json')
    expect(await exited).toBe(0)
  })
})
