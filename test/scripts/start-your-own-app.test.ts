import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { cleanEnv, copyRepository, lintChanged, type CheckoutCopy } from './checkout-copy.js'

/*
 * The guide "Start your own app" (docs/guides/start-your-own-app.md): `npm run generate -- blank` in a copy of
 * the repository removes the chat (the files the guide lists) and leaves users and authentication; a service
 * generated next has a login to use.
 * The copy then type-checks, lints, passes the core suites, builds, and its server answers /health, signs a
 * user up and knows no `messages`.
 */
const exec = promisify(execFile)
/** What the blank app deletes (scripts/generate/blank.mjs reads the same list). */
const chatFiles = JSON.parse(readFileSync('scripts/generate/chat-files.json', 'utf8')) as string[]
let copy: CheckoutCopy

async function run(command: string, args: string[], env: NodeJS.ProcessEnv = cleanEnv()) {
  try {
    return await exec(command, args, { cwd: copy.dir, env, maxBuffer: 10_000_000 })
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string }
    throw new Error(`${[command, ...args].join(' ')} failed:\n${stdout}\n${stderr}`.slice(-4000), { cause: error })
  }
}

/** Starts the copy's built server on a free port; resolves with its URL once it logged that it started. */
async function start(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [join(copy.dir, 'dist', 'plumage.mjs')], {
    cwd: copy.dir,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', PORT: '0', BCRYPT_ROUNDS: '4', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let errors = ''
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()))
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${errors}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; url?: string }
      if (entry.msg === 'plumage started') resolve(entry.url!)
    })
  })
  return { url, stop: () => child.kill() }
}

beforeAll(async () => {
  copy = await copyRepository()
}, 120_000)
afterAll(() => copy?.remove())

describe('npm run generate -- blank', () => {
  it('lists in its guide (docs/guides/start-your-own-app.md) exactly the files it deletes', () => {
    const guide = readFileSync('docs/guides/start-your-own-app.md', 'utf8')
    const list = guide.split('<!-- blank-app-files -->\n')[1]!.split('\n\n')[0]!
    expect([...list.matchAll(/`([^`]+)`/g)].map((match) => match[1])).toEqual(chatFiles)
    for (const path of chatFiles) expect(`${path}: ${existsSync(path)}`).toBe(`${path}: true`)
  })

  it('leaves the docs site buildable: no page shows an image or links to a file that the blank app deletes', () => {
    // VitePress bundles what a page's Markdown links to (`![…](path)`, `[…](file)`): a missing one fails the build.
    const pages = readdirSync('docs', { recursive: true, encoding: 'utf8' }).filter(
      (name) => name.endsWith('.md') && !name.startsWith('reference/api/')
    )
    const targets = pages.flatMap((page) =>
      [...readFileSync(join('docs', page), 'utf8').matchAll(/\]\((\.[^)#\s]*)/g)].map(
        ([, path]) => `docs/${page} -> ${normalize(join('docs', dirname(page), path!))}`
      )
    )
    expect(targets.length).toBeGreaterThan(50)
    const deleted = targets.filter((target) => chatFiles.some((file) => target.split(' -> ')[1]!.startsWith(file)))
    expect(deleted).toEqual([])
  })

  it('leaves an app without the chat that type-checks, lints, passes its core tests and serves', async () => {
    const since = Date.now()
    await run('npm', ['run', '--silent', 'generate', '--', 'blank'])
    for (const path of chatFiles) expect(`${path}: ${existsSync(join(copy.dir, path))}`).toBe(`${path}: false`)
    expect(readFileSync(join(copy.dir, 'public', 'index.html'), 'utf8')).not.toContain('chat')
    await expect(run('npm', ['run', '--silent', 'generate', '--', 'blank'])).rejects.toThrow('a blank app already')
    await run('npm', ['run', '--silent', 'generate', '--', 'service', 'todos', '--owner'])
    const tsc = join(copy.dir, 'node_modules', 'typescript', 'bin', 'tsc')
    await Promise.all([run(process.execPath, [tsc, '--noEmit']), lintChanged(copy, since)])
    const jest = join(copy.dir, 'node_modules', 'jest', 'bin', 'jest.js')
    const suites = ['test/services', 'test/container.test.ts', 'test/application/users-email.test.ts']
    const { stderr } = await run(
      process.execPath,
      [jest, '--maxWorkers=1', ...suites],
      cleanEnv({ NODE_OPTIONS: '--experimental-vm-modules' })
    )
    expect(stderr).toMatch(/Test Suites: 3 passed, 3 total/)
    await run(process.execPath, [join(copy.dir, 'scripts', 'build-server.mjs')])
    const server = await start()
    try {
      expect((await fetch(`${server.url}/health`)).status).toBe(200)
      const signUp = await fetch(`${server.url}/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ann@example.com', password: 'secret-pw' })
      })
      expect(signUp.status).toBe(201)
      expect((await fetch(`${server.url}/todos`)).status).toBe(401)
      expect((await fetch(`${server.url}/messages`)).status).toBe(404)
    } finally {
      server.stop()
    }
  }, 600_000)
})
