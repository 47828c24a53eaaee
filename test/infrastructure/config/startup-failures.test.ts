import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn, spawnSync } from 'node:child_process'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildMain } from '../../support/built-server.js'
import { freePort } from '../../support/free-port.js'

/*
 * What the machine can refuse at startup reads like a bad setting: exit code 1 and exactly one
 * line on stderr naming the variable to change, no stack. STATIC_DIR is read from the app's folder
 * (where package.json is), whatever the current directory, and a missing one is only a warning.
 */
let built: { main: string; outDir: string }
let scratch: string

beforeAll(async () => {
  built = await buildMain('startup')
  scratch = await mkdtemp(join(tmpdir(), 'plumage-startup-'))
}, 60_000)
afterAll(async () => {
  await rm(built.outDir, { recursive: true, force: true })
  await rm(scratch, { recursive: true, force: true })
})

interface Outcome {
  code: number | null
  stdout: string
  stderr: string
  url?: string
  home?: { status: number; text: string }
}

/**
 * Starts the built server; when it does start, fetches `/` and stops it. `asNobody` runs it as the
 * unprivileged user `nobody` (for root, who reads every folder whatever its mode).
 */
function start(env: Record<string, string>, cwd = process.cwd(), asNobody = false): Promise<Outcome> {
  const environment = { PATH: process.env.PATH ?? '', PORT: '0', NODE_ENV: 'test', ...env }
  const child = asNobody
    ? spawn(
        'runuser',
        [
          '-u',
          'nobody',
          '--',
          'env',
          ...Object.entries(environment).map(([name, value]) => `${name}=${value}`),
          process.execPath,
          built.main
        ],
        { cwd, stdio: ['ignore', 'pipe', 'pipe'] }
      )
    : spawn(process.execPath, [built.main], { cwd, env: environment, stdio: ['ignore', 'pipe', 'pipe'] })
  const outcome: Outcome = { code: null, stdout: '', stderr: '' }
  child.stdout.on('data', (chunk) => {
    outcome.stdout += String(chunk)
    const started = /"url":"([^"]+)".*"msg":"plumage started"/.exec(outcome.stdout)
    if (started && outcome.url === undefined) {
      outcome.url = started[1]!
      void fetch(`${outcome.url}/`)
        .then(async (response) => {
          outcome.home = { status: response.status, text: await response.text() }
        })
        .finally(() => child.kill('SIGTERM'))
    }
  })
  child.stderr.on('data', (chunk) => {
    outcome.stderr += String(chunk)
  })
  return new Promise((resolve) => child.once('close', (code) => resolve({ ...outcome, code })))
}

function occupiedPort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () =>
      resolve({ server, port: (server.address() as { port: number }).port })
    )
  })
}

/**
 * A stand-in PostgreSQL server that refuses every login as PostgreSQL does: an ErrorResponse with
 * SQLSTATE 28P01 in answer to the startup message (node-postgres sends no SSLRequest without sslmode).
 */
function refusingPostgres(): Promise<{ server: Server; port: number }> {
  const field = (code: string, value: string) => Buffer.concat([Buffer.from(code), Buffer.from(`${value}\0`)])
  const fields = Buffer.concat([
    field('S', 'FATAL'),
    field('V', 'FATAL'),
    field('C', '28P01'),
    field('M', 'password authentication failed for user "plumage"'),
    Buffer.from([0])
  ])
  const length = Buffer.alloc(4)
  length.writeInt32BE(fields.length + 4)
  const refusal = Buffer.concat([Buffer.from('E'), length, fields])
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.once('data', () => socket.end(refusal))).listen(0, '127.0.0.1', () =>
      resolve({ server, port: (server.address() as { port: number }).port })
    )
  })
}

describe('a PostgreSQL that is not there or refuses the login', () => {
  it('says in one line, naming the URL with its password masked, that nothing answers on its port', async () => {
    const port = await freePort()
    const url = `postgres://plumage:hunter2@127.0.0.1:${port}/plumage`
    const { code, stdout, stderr } = await start({ STORE: 'postgres', POSTGRES_URL: url, POSTGRES_TIMEOUT: '1' })
    expect(code).toBe(1)
    expect(stderr).toMatch(
      new RegExp(
        `^plumage failed to start: PostgreSQL at postgres://plumage:\\*\\*\\*@127\\.0\\.0\\.1:${port}/plumage is unavailable: connect ECONNREFUSED [^\n]+POSTGRES_URL[^\n]+\n$`
      )
    )
    expect(stdout + stderr).not.toContain('hunter2')
  })

  it('says in one line that the login was refused, and what to check', async () => {
    const { server, port } = await refusingPostgres()
    try {
      const url = `postgres://plumage:hunter2@127.0.0.1:${port}/plumage`
      const { code, stdout, stderr } = await start({ STORE: 'postgres', POSTGRES_URL: url, POSTGRES_TIMEOUT: '5' })
      expect(code).toBe(1)
      expect(stderr).toBe(
        `plumage failed to start: PostgreSQL at postgres://plumage:***@127.0.0.1:${port}/plumage refused the connection: password authentication failed for user "plumage" (check the user, password and database of POSTGRES_URL, or POSTGRES_PASSWORD_FILE; README "Run with PostgreSQL" creates them)\n`
      )
      expect(stdout + stderr).not.toContain('hunter2')
    } finally {
      server.close()
    }
  })
})

describe('a start the machine refuses', () => {
  it('says in one line that the port is in use and which variable to change', async () => {
    const { server, port } = await occupiedPort()
    try {
      const { code, stdout, stderr } = await start({ PORT: String(port) })
      expect(code).toBe(1)
      expect(stderr).toBe(`plumage failed to start: port ${port} is in use: set PORT to a free port\n`)
      expect(stdout).not.toContain('plumage started')
    } finally {
      server.close()
    }
  })

  it('says in one line that HOST is not a known host name', async () => {
    const { code, stderr } = await start({ HOST: 'no-such-host.invalid' })
    expect(code).toBe(1)
    expect(stderr).toMatch(
      /^plumage failed to start: HOST no-such-host\.invalid is not a known host name \(getaddrinfo (ENOTFOUND|EAI_AGAIN)\): set HOST to an address of this machine, e\.g\. 127\.0\.0\.1, or 0\.0\.0\.0 for all\n$/
    )
  })

  it('says in one line that HOST is not an address of this machine', async () => {
    // 192.0.2.0/24 is reserved for documentation: no machine has it.
    const { code, stderr } = await start({ HOST: '192.0.2.1' })
    expect(code).toBe(1)
    expect(stderr).toBe(
      'plumage failed to start: HOST 192.0.2.1 is not an address of this machine: set HOST to one of its addresses, e.g. 127.0.0.1, or 0.0.0.0 for all\n'
    )
  })

  it('says in one line that STATIC_DIR is not a folder', async () => {
    const file = join(scratch, 'index.html')
    await writeFile(file, '<!doctype html>')
    const { code, stdout, stderr } = await start({ STATIC_DIR: file })
    expect(code).toBe(1)
    expect(stderr).toBe(
      `plumage failed to start: STATIC_DIR ${file} is not a folder: set STATIC_DIR to a folder, or empty to serve no files\n`
    )
    expect(stdout).not.toContain('plumage started')
  })

  // root reads every folder whatever its mode: as root, the server runs as `nobody` (runuser).
  // nobody must also be able to read the checkout (the bundle loads its packages from node_modules):
  // a clone inside a private folder (mktemp -d is 0700) cannot run as nobody at all.
  const root = process.getuid?.() === 0
  const canTest =
    !root ||
    spawnSync('runuser', [
      '-u',
      'nobody',
      '--',
      'test',
      '-r',
      join(process.cwd(), 'node_modules', 'pino', 'package.json')
    ]).status === 0
  if (!canTest)
    console.warn(
      'STATIC_DIR permission test SKIPPED: running as root and the user nobody cannot read this checkout, so no unprivileged server can be started from it'
    )
  ;(canTest ? it : it.skip)('says in one line that STATIC_DIR cannot be read', async () => {
    const locked = join(scratch, 'locked')
    await mkdir(locked, { recursive: true })
    await chmod(locked, 0o000)
    // nobody must be able to reach the folder's parent.
    await chmod(scratch, 0o755)
    try {
      const { code, stderr } = await start({ STATIC_DIR: locked }, process.cwd(), root)
      expect(code).toBe(1)
      expect(stderr).toBe(
        `plumage failed to start: STATIC_DIR ${locked} cannot be read (EACCES): give the server's user read access, or set STATIC_DIR to another folder\n`
      )
    } finally {
      await chmod(locked, 0o755)
    }
  })
})

describe('STATIC_DIR', () => {
  it('is read from the app folder, not the current directory', async () => {
    // Started from elsewhere, the default `public` is still the checkout's chat page.
    const { code, stderr, home } = await start({}, scratch)
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(home?.status).toBe(200)
    expect(home?.text).toContain('<title>plumage chat</title>')
  })

  it('only warns when the folder does not exist, and the API still starts', async () => {
    const missing = join(scratch, 'no-such-folder')
    const { code, stdout, stderr, home } = await start({ STATIC_DIR: missing })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const warning = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .find((entry) => entry.msg.startsWith('STATIC_DIR'))
    expect(warning).toEqual(
      expect.objectContaining({
        level: 40,
        msg: `STATIC_DIR ${missing} does not exist: no static files are served (set STATIC_DIR to a folder, or empty to turn this off)`
      })
    )
    expect(home?.status).toBe(404)
  })
})
