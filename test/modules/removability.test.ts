import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { io } from 'socket.io-client'
import { modules } from '../../src/modules/index.js'

/*
 * Every optional module can be deleted: the README's module table names each one's folders and files and its
 * registry line; for each module alone, and for all of them at once, a copy of the repository loses those, then
 * must type-check (src), build, start the chat on memory, answer a call and deliver a live event. The copies are
 * checked two at a time.
 */
const root = process.cwd()
const run = promisify(execFile)

interface ModuleRow {
  name: string
  paths: string[]
  /** The registry line's key; undefined for a folder the modules share (deleted with all of them). */
  line?: string
}

/** The README's table of modules (after the `<!-- modules -->` marker). */
async function moduleTable(): Promise<ModuleRow[]> {
  const readme = await readFile(join(root, 'README.md'), 'utf8')
  const table = readme.split('<!-- modules -->')[1]!.trim().split('\n\n')[0]!.split('\n').slice(2)
  return table.map((row) => {
    const [name, paths, line] = row
      .split('|')
      .slice(1, 4)
      .map((cell) => cell.trim())
    const quoted = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)
    return { name: name!, paths: quoted(paths!), line: quoted(line!)[0] }
  })
}

/** A copy of what the server build reads, with the checkout's node_modules linked in. */
async function copyOf(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plumage-removal-'))
  for (const name of [
    'src',
    'public',
    'scripts',
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json'
  ])
    await cp(join(root, name), join(dir, name), { recursive: true })
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
  return dir
}

/** Deletes the rows' paths and their lines of src/modules/index.ts. */
async function remove(dir: string, rows: ModuleRow[]): Promise<void> {
  for (const row of rows) for (const path of row.paths) await rm(join(dir, path), { recursive: true, force: false })
  const registry = join(dir, 'src', 'modules', 'index.ts')
  const lines = (await readFile(registry, 'utf8')).split('\n')
  const registered = rows.filter((row) => row.line !== undefined)
  const kept = lines.filter((text) => !registered.some((row) => text.trimStart().startsWith(`${row.line}: {`)))
  expect(lines.length - kept.length).toBe(registered.length)
  await writeFile(registry, kept.join('\n'))
}

/** Starts the copy's built server on a free port; resolves with its URL once it logged that it started. */
async function start(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(dir, 'dist', 'plumage.mjs')], {
    cwd: dir,
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
  return { url, child }
}

/** The chat's essential path: sign up, log in, a socket receives the message a REST call creates. */
async function chat(url: string): Promise<unknown> {
  const post = async (path: string, body: unknown, token?: string) => {
    const response = await fetch(`${url}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body)
    })
    expect(response.status).toBe(201)
    return (await response.json()) as Record<string, unknown>
  }
  const user = { email: 'ann@example.com', password: 'secret-pw' }
  await post('users', user)
  const { accessToken } = (await post('authentication', { strategy: 'local', ...user })) as { accessToken: string }
  const socket = io(url, { transports: ['websocket'], extraHeaders: { authorization: `Bearer ${accessToken}` } })
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('connect_error', reject))
    const created = new Promise((resolve) => socket.once('messages created', resolve))
    await post('messages', { text: 'still here' }, accessToken)
    return await created
  } finally {
    socket.close()
  }
}

const rows = await moduleTable()
const variants: [string, ModuleRow[]][] = [
  ...rows.filter((row) => row.line !== undefined).map((row): [string, ModuleRow[]] => [row.name, [row]]),
  ['every module', rows]
]
const checked = new Map<string, Promise<unknown>>()

/**
 * Type-checks a copy incrementally: every copy starts from what the type-check of the whole repository left
 * (`.tsbuildinfo`, its paths relative to the copy), so only the files a removal touched are checked again.
 */
const typeCheck = (dir: string) =>
  run(
    process.execPath,
    [
      join(dir, 'node_modules', 'typescript', 'bin', 'tsc'),
      ...['-p', 'tsconfig.build.json', '--noEmit', '--incremental', '--tsBuildInfoFile', '.tsbuildinfo']
    ],
    { cwd: dir }
  )

/** The `.tsbuildinfo` of the whole repository, type-checked once in a copy of its own. */
const checkedWhole: Promise<Buffer> = (async () => {
  const dir = await copyOf()
  try {
    await typeCheck(dir)
    return await readFile(join(dir, '.tsbuildinfo'))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})()
checkedWhole.catch(() => undefined)

/** Checks one variant in a copy: type-check, build, start, chat. At most two run at a time. */
async function check(rowsToRemove: ModuleRow[]): Promise<unknown> {
  const dir = await copyOf()
  try {
    await remove(dir, rowsToRemove)
    await writeFile(join(dir, '.tsbuildinfo'), await checkedWhole)
    await typeCheck(dir)
    await run(process.execPath, [join(dir, 'scripts', 'build-server.mjs')], { cwd: dir })
    const { url, child } = await start(dir)
    try {
      return await chat(url)
    } finally {
      child.kill()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

describe('every optional module can be deleted', () => {
  beforeAll(() => {
    let queue = Promise.resolve() as Promise<unknown>
    let other = Promise.resolve() as Promise<unknown>
    // Two lanes: the variants alternate between them.
    variants.forEach(([name, remove], index) => {
      const lane = index % 2 === 0 ? queue : other
      const done = lane.catch(() => undefined).then(() => check(remove))
      checked.set(name, done)
      if (index % 2 === 0) queue = done
      else other = done
    })
  })
  afterAll(async () => {
    await Promise.allSettled(checked.values())
  })

  it('lists every module of the registry in the README table, and no other', () => {
    expect(rows.flatMap((row) => (row.line ? [row.line] : [])).sort()).toEqual(Object.keys(modules).sort())
  })

  it.each(variants.map(([name]) => name))(
    'builds and serves the chat without %s',
    async (name) => {
      expect(await checked.get(name)).toMatchObject({ text: 'still here' })
    },
    600_000
  )
})
