import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './free-port.js'

/** Where Debian's PostgreSQL keeps its binaries (package postgresql-<major>); POSTGRES_BIN overrides. */
export function postgresBin(): string | undefined {
  if (process.env.POSTGRES_BIN) return process.env.POSTGRES_BIN
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const majors = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a))
  return majors.length > 0 ? join(root, majors[0]!, 'bin') : undefined
}

/** The role initdb creates; loopback connections are trusted (a throw-away cluster). */
export const POSTGRES_USER = 'plumage'

export interface PostgresServer {
  /** postgres://<superuser>@127.0.0.1:<port>/postgres */
  url: string
  port: number
  /** The folder of the server's Unix socket (psql -h <socketDir>: trusted local connections). */
  socketDir: string
  /** The server's PID (it changes with restart()). */
  readonly pid: number
  /** Fast shutdown by PID (SIGINT: clients are disconnected); the data stays for start(). */
  halt(): Promise<void>
  /** Starts the server again on the same folder and port (after halt()). */
  start(): Promise<void>
  /** Stops the server by PID and removes its folder. */
  stop(): Promise<void>
}

/**
 * initdb and postgres refuse to run as root: as root they run as the `postgres` user (Debian's
 * package creates it), else as `nobody`; as anyone else, as that user.
 */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  for (const name of ['postgres', 'nobody']) {
    const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' })
    const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' })
    if (uid.status === 0 && gid.status === 0) return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as')
}

export interface StartPostgresOptions {
  /** Where the binaries are (default postgresBin()). */
  bin?: string
  /** Each postgres process spawned (the bench tracks them to kill them on any way out). */
  spawned?: (child: ChildProcess) => void
  /** `-c name=value` settings added to the defaults. */
  settings?: Record<string, string>
  /** The superuser initdb creates (default POSTGRES_USER, `plumage`). */
  superuser?: string
  /** How TCP connections authenticate (default trust; `scram-sha-256` checks passwords, as a real server does). */
  hostAuth?: 'trust' | 'scram-sha-256'
}

/**
 * A PostgreSQL cluster of its own, in a temporary folder, on a free loopback port: initdb, then
 * `postgres` as a child process, stopped by its PID. Durable as shipped (fsync and
 * synchronous_commit on), UTF-8, C collation.
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bin = options.bin ?? postgresBin()
  if (!bin) throw new Error('PostgreSQL binaries not found (Debian: apt-get install postgresql, or set POSTGRES_BIN)')
  const user = runAs()
  const superuser = options.superuser ?? POSTGRES_USER
  const dir = mkdtempSync(join(tmpdir(), 'plumage-pg-'))
  if (user) chownSync(dir, user.uid, user.gid)
  const data = join(dir, 'data')
  const init = spawnSync(
    join(bin, 'initdb'),
    [
      '-D',
      data,
      '-U',
      superuser,
      '--auth-local=trust',
      `--auth-host=${options.hostAuth ?? 'trust'}`,
      '--encoding=UTF8',
      '--locale=C',
      '--no-instructions'
    ],
    { ...user, encoding: 'utf8', cwd: dir }
  )
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(
      `initdb failed (${init.error?.message ?? `status ${init.status}`}): ${init.stderr?.trim().split('\n').slice(-3).join(' ')}`
    )
  }
  const port = await freePort()
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    fsync: 'on',
    synchronous_commit: 'on',
    full_page_writes: 'on',
    max_connections: '200',
    ...options.settings
  }
  const args = [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])
  ]
  let child: ChildProcess | undefined
  // On any way out, the folder goes too (and the server, should a test have failed to stop it).
  const remove = () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', remove)

  const launch = async (): Promise<void> => {
    const started = spawn(join(bin, 'postgres'), args, { ...user, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
    child = started
    options.spawned?.(started)
    await new Promise<void>((resolve, reject) => {
      let log = ''
      const timer = setTimeout(
        () => reject(new Error(`postgres was not ready within 30 s: ${log.slice(-500)}`)),
        30_000
      )
      started.once('error', (error) => {
        clearTimeout(timer)
        reject(new Error(`postgres could not be started: ${error.message}`))
      })
      started.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`postgres exited (${signal ?? `code ${code}`}): ${log.slice(-500)}`))
      })
      started.stderr!.on('data', (chunk: Buffer) => {
        log += chunk.toString()
        if (/ready to accept connections/.test(log)) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    // From now on only its warnings and errors are shown.
    started.stderr!.removeAllListeners('data')
    started.stderr!.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n'))
        if (/\b(WARNING|PANIC):/.test(line)) process.stderr.write(`[postgres] ${line}\n`)
    })
  }
  const halt = async (): Promise<void> => {
    const running = child
    if (!running || running.exitCode !== null || running.signalCode !== null) return
    const exited = once(running, 'exit')
    running.kill('SIGINT')
    const timer = setTimeout(() => running.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  const stop = async (): Promise<void> => {
    await halt()
    remove()
    process.off('exit', remove)
  }
  try {
    await launch()
  } catch (error) {
    await stop()
    throw error
  }
  return {
    url: `postgres://${superuser}@127.0.0.1:${port}/postgres`,
    port,
    socketDir: dir,
    get pid() {
      return child!.pid!
    },
    halt,
    start: launch,
    stop
  }
}

export const SKIP_MESSAGE =
  'PostgreSQL suite SKIPPED: set POSTGRES_URL, or install PostgreSQL (Debian: apt-get install postgresql)'

/** A database of its own for a test file, on the server the run found. */
export interface PostgresTestDatabase {
  /** A URL to a fresh database (`plumage_test_<random>`). */
  url: string
  /** Creates another database beside it (dropped by stop()) and answers its URL. */
  fresh(): Promise<string>
  /** The throw-away server, when the run started one (restart tests need it); undefined with POSTGRES_URL. */
  server?: PostgresServer
  /** Drops the database and stops the throw-away server. */
  stop(): Promise<void>
}

/**
 * Finds a PostgreSQL for the integration suites: POSTGRES_URL when set, else a throw-away server when
 * the binaries are installed, else nothing — the suites then skip with one loud line, except on CI
 * (`CI=true`), where a missing PostgreSQL fails the run instead. Every test file works in a fresh
 * database that `stop()` drops (and `fresh()` makes more).
 */
export async function discoverPostgres(options: { ownServer?: boolean } = {}): Promise<PostgresTestDatabase | null> {
  const given = process.env.POSTGRES_URL
  let server: PostgresServer | undefined
  let base: string
  if (given && !options.ownServer) base = given
  else if (postgresBin()) {
    server = await startPostgres()
    base = server.url
  } else {
    if (process.env.CI === 'true')
      throw new Error(`PostgreSQL is required on CI and was not found: ${SKIP_MESSAGE.replace(/^.*?: /, '')}`)
    announceSkipOnce()
    return null
  }
  const run = `plumage_test_${randomBytes(6).toString('hex')}`
  const names: string[] = []
  const create = async (): Promise<string> => {
    const name = names.length === 0 ? run : `${run}_${names.length}`
    const admin = new pg.Client({ connectionString: base })
    await admin.connect()
    try {
      await admin.query(`CREATE DATABASE ${name}`)
    } finally {
      await admin.end()
    }
    names.push(name)
    const url = new URL(base)
    url.pathname = `/${name}`
    return url.toString()
  }
  const url = await create()
  return {
    url,
    fresh: create,
    ...(server ? { server } : {}),
    async stop() {
      if (server) return server.stop()
      const client = new pg.Client({ connectionString: base })
      await client.connect()
      try {
        for (const name of names) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    }
  }
}

/**
 * One loud line per test run, however many suite files skip: jest's workers share their parent's
 * pid, so the first file to skip claims a marker named after it and the others stay quiet.
 */
function announceSkipOnce(): void {
  try {
    closeSync(openSync(join(tmpdir(), `plumage-postgres-skipped-${process.ppid}`), 'wx'))
    // Straight to stderr: jest drops console output of a file whose tests are all skipped.
    process.stderr.write(`\n${SKIP_MESSAGE}\n\n`)
  } catch {
    // Another suite file of this run already said it.
  }
}
