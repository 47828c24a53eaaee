import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn, type ChildProcess } from 'node:child_process'
import { appendFile, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import jwt from 'jsonwebtoken'
import { freePort } from '../support/free-port.js'
import { cleanEnv, copyCheckout, type CheckoutCopy } from './checkout-copy.js'

/*
 * `npm run dev` (scripts/dev.mjs) in a copy of the checkout: it reads .env when there is one and
 * starts without it, rebuilds and restarts the server when a source file changes, and keeps one
 * AUTH_SECRET across restarts, so a token from before a restart still works after it.
 */
let copy: CheckoutCopy
let dev: ChildProcess | undefined

beforeAll(async () => {
  copy = await copyCheckout()
}, 60_000)
afterEach(async () => {
  if (dev && dev.exitCode === null && dev.signalCode === null) {
    const exited = new Promise((resolve) => dev!.once('exit', resolve))
    process.kill(-dev.pid!, 'SIGKILL')
    await exited
  }
  await rm(join(copy.dir, '.env'), { force: true })
})
afterAll(() => copy?.remove())

interface Dev {
  child: ChildProcess
  stderr: () => string
  /** Resolves once stderr contains `text`. */
  said(text: string): Promise<void>
  started(count: number): Promise<{ url: string; pid: number }>
}

function startDev(env: Record<string, string> = {}): Dev {
  // Its own process group: the server it runs stops with it.
  const child = spawn(process.execPath, ['scripts/dev.mjs'], {
    cwd: copy.dir,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  })
  dev = child
  let stdout = ''
  let stderr = ''
  const starts: { url: string; pid: number }[] = []
  const waiting: (() => void)[] = []
  const listening: (() => void)[] = []
  child.stdout!.on('data', (chunk) => {
    stdout += String(chunk)
    const lines = stdout.split('\n')
    stdout = lines.pop()!
    for (const line of lines) {
      const entry = JSON.parse(line) as { msg: string; url?: string; pid: number }
      if (entry.msg === 'plumage started') starts.push({ url: entry.url!, pid: entry.pid })
    }
    for (const wake of waiting.splice(0)) wake()
  })
  child.stderr!.on('data', (chunk) => {
    stderr += String(chunk)
    for (const wake of listening.splice(0)) wake()
  })
  return {
    child,
    stderr: () => stderr,
    said: (text) =>
      new Promise((resolve, reject) => {
        const check = () => (stderr.includes(text) ? resolve() : listening.push(check))
        child.once('exit', (code) => reject(new Error(`npm run dev exited (${code}):\n${stderr}`)))
        check()
      }),
    started: (count) =>
      new Promise((resolve, reject) => {
        const check = () => (starts.length >= count ? resolve(starts[count - 1]!) : waiting.push(check))
        child.once('exit', (code) => reject(new Error(`npm run dev exited (${code}):\n${stderr}`)))
        check()
      })
  }
}

async function call(
  url: string,
  path: string,
  init: { method?: string; body?: unknown; token?: string } = {}
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'Content-Type': 'application/json', ...(init.token ? { Authorization: `Bearer ${init.token}` } : {}) },
    ...(init.body ? { body: JSON.stringify(init.body) } : {})
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const ann = { email: 'ann@example.com', password: 'secret-pw' }

/** Signs Ann up (the first user: id 0 on the memory store) and logs her in. */
async function signUp(url: string): Promise<string> {
  expect(await call(url, '/users', { method: 'POST', body: ann })).toMatchObject({ status: 201, body: { id: 0 } })
  const login = await call(url, '/authentication', { method: 'POST', body: { strategy: 'local', ...ann } })
  return login.body.accessToken as string
}

/** Saves a source file of the server, as an editor does. */
const edit = () => appendFile(join(copy.dir, 'src', 'services', 'users', 'users.hooks.ts'), '// edited\n')

describe('npm run dev', () => {
  it('reads .env, restarts on a change and keeps its AUTH_SECRET across the restart', async () => {
    const port = await freePort()
    const secret = 'from-the-env-file-0123456789'
    await writeFile(
      join(copy.dir, '.env'),
      `# development settings\nAUTH_SECRET=${secret}\nPORT=${port}\nNODE_ENV=test\nLOG_LEVEL=info\n`
    )
    const run = startDev()
    const first = await run.started(1)
    expect(new URL(first.url).port).toBe(String(port))
    expect(run.stderr()).toContain(`read ${join(copy.dir, '.env')}`)
    const token = await signUp(first.url)
    expect(() => jwt.verify(token, secret)).not.toThrow()

    await edit()
    const second = await run.started(2)
    expect(second.pid).not.toBe(first.pid)
    expect(second.url).toBe(first.url)
    expect(run.stderr()).toContain('server rebuilt: restarting')
    // The memory store starts empty: the same user again, and the old token is still good.
    await signUp(second.url)
    expect(await call(second.url, '/users/0', { token })).toMatchObject({ status: 200, body: { email: ann.email } })
  }, 90_000)

  it('starts without a .env file, with one secret for the whole session', async () => {
    const run = startDev({ PORT: '0', NODE_ENV: 'test', LOG_LEVEL: 'info' })
    const first = await run.started(1)
    expect(run.stderr()).toContain('no .env file')
    expect(run.stderr()).toContain('AUTH_SECRET is not set: using a random one for this session')
    const token = await signUp(first.url)

    await edit()
    const second = await run.started(2)
    expect(second.pid).not.toBe(first.pid)
    await signUp(second.url)
    expect(await call(second.url, '/users/0', { token })).toMatchObject({ status: 200, body: { email: ann.email } })
  }, 90_000)

  it('reports a build error once, without an error of its own or a stack trace, and keeps the server', async () => {
    const file = join(copy.dir, 'src', 'services', 'users', 'users.hooks.ts')
    const source = await readFile(file, 'utf8')
    const run = startDev({ PORT: '0', NODE_ENV: 'test' })
    const { url } = await run.started(1)
    try {
      await appendFile(file, 'export const broken = (\n')
      await run.said('the server did not build')
      expect((await fetch(`${url}/health`)).status).toBe(200)
    } finally {
      await writeFile(file, source)
    }
    // Whatever esbuild printed about the broken build came before the next one.
    await run.started(2)
    expect(run.stderr().match(/\[ERROR\]/g)).toHaveLength(1)
    expect(run.stderr()).toContain('users.hooks.ts')
    expect(run.stderr()).not.toContain('restart-server')
    expect(run.stderr()).not.toMatch(/\n\s+at /)
  }, 60_000)

  it('stops the server with it', async () => {
    const run = startDev({ PORT: '0', NODE_ENV: 'test' })
    const { url } = await run.started(1)
    const exited = new Promise<number | null>((resolve) => run.child.once('exit', resolve))
    run.child.kill('SIGTERM')
    expect(await exited).toBe(0)
    await expect(fetch(`${url}/health`)).rejects.toThrow()
  }, 60_000)
})
