import { spawn, spawnSync } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, stopChild, track } from './processes.js'

/** Debian's PostgreSQL 15 (package postgresql-15). */
export const POSTGRES_BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'
/** The role initdb creates; loopback connections are trusted (a throw-away cluster). */
export const POSTGRES_USER = 'bench'

export interface Postgres {
  /** postgres://bench@127.0.0.1:<port>/postgres */
  url: string
  pid: number
  /** Fast shutdown by PID (SIGINT: clients are disconnected), then the folder is removed. */
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

/**
 * A PostgreSQL cluster of its own for `npm run bench:realtime`'s anchor, in a temporary folder, on a
 * free loopback port, durable as shipped: fsync and synchronous_commit on (set explicitly, so the
 * anchor's commits wait for the disk like plumage's RethinkDB writes, durability 'hard', do).
 */
export async function startPostgres(): Promise<Postgres> {
  const user = runAs()
  const dir = mkdtempSync(join(tmpdir(), 'bench-realtime-pg-'))
  if (user) chownSync(dir, user.uid, user.gid)
  const data = join(dir, 'data')
  const init = spawnSync(
    join(POSTGRES_BIN, 'initdb'),
    ['-D', data, '-U', POSTGRES_USER, '--auth=trust', '--encoding=UTF8', '--no-instructions'],
    { ...user, encoding: 'utf8', cwd: dir }
  )
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(
      `initdb failed (${init.error?.message ?? `status ${init.status}`}): ${init.stderr?.trim().split('\n').slice(-3).join(' ')}`
    )
  }
  const port = await freePort()
  const child = track(
    spawn(
      join(POSTGRES_BIN, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=on',
        '-c',
        'synchronous_commit=on',
        '-c',
        'full_page_writes=on',
        '-c',
        'max_connections=100'
      ],
      { ...user, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] }
    )
  )
  // On any way out (killChildren SIGKILLs the server first), the folder goes too.
  const remove = () => rmSync(dir, { recursive: true, force: true })
  process.once('exit', remove)
  const stop = async () => {
    await stopChild(child, 'SIGINT', 10_000)
    remove()
    process.off('exit', remove)
  }
  try {
    await new Promise<void>((resolve, reject) => {
      let log = ''
      const timer = setTimeout(
        () => reject(new Error(`postgres was not ready within 30 s: ${log.slice(-500)}`)),
        30_000
      )
      child.once('error', (error) => {
        clearTimeout(timer)
        reject(new Error(`postgres could not be started: ${error.message}`))
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`postgres exited (${signal ?? `code ${code}`}): ${log.slice(-500)}`))
      })
      child.stderr!.on('data', (chunk: Buffer) => {
        log += chunk.toString()
        if (/ready to accept connections/.test(log)) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
  } catch (error) {
    await stop()
    throw error
  }
  // From now on its warnings and errors are shown; LOG lines are not.
  child.stderr!.removeAllListeners('data')
  child.stderr!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n'))
      if (/\b(WARNING|ERROR|FATAL|PANIC):/.test(line)) console.error(`[postgres] ${line}`)
  })
  return { url: `postgres://${POSTGRES_USER}@127.0.0.1:${port}/postgres`, pid: child.pid!, stop }
}

/**
 * The anchor's tables, as a Feathers v5 app generated for PostgreSQL would migrate them: `users` for
 * the local strategy, `messages` with the fields the bench's creates carry (`from` is quoted by knex).
 * Dropped and made again for every instance count, so each starts empty.
 */
export const ANCHOR_TABLES_SQL = `
  DROP TABLE IF EXISTS messages, users;
  CREATE TABLE users (id serial PRIMARY KEY, email text NOT NULL UNIQUE, password text NOT NULL);
  CREATE TABLE messages (id serial PRIMARY KEY, text text NOT NULL, t double precision, "from" integer, p integer, "userId" integer);
`
