import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, openSync } from 'node:fs'
import { request } from 'node:http'
import { connect } from 'node:net'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { R } from 'rethinkdb-ts'
import { connectRethinkDb, parseRethinkDbUrl } from '../../src/infrastructure/rethinkdb/rethinkdb-connection.js'
import { RETHINKDB_BIN, rethinkDbProcess } from './rethinkdb-process.js'

/**
 * Finds a RethinkDB for the integration suites: RETHINKDB_URL when set, else a throw-away server of
 * RETHINKDB_BIN (a `rethinkdb` executable, started in a temporary folder on free ports), else a
 * throw-away `rethinkdb:2.4` container when a Docker engine answers, else nothing (the suites are
 * skipped and the run says so in one loud line). Every run works in a fresh database that `stop()` drops.
 */
export interface RethinkDbTestServer {
  r: R
  host: string
  port: number
  /** The fresh database of this run: `plumage_test_<random>`; suites may add `<db>_<n>` beside it. */
  db: string
  /** Drops the database (and every `<db>_<n>`), drains the pool and stops the server or container it started. */
  stop(): Promise<void>
}

export const SKIP_MESSAGE = 'RethinkDB suite SKIPPED: set RETHINKDB_URL or RETHINKDB_BIN, or start Docker'

const DOCKER_PROBE_TIMEOUT_MS = 1_500

export async function discoverRethinkDb(): Promise<RethinkDbTestServer | null> {
  const url = process.env.RETHINKDB_URL
  // Asked for explicitly: an unreachable server is a failure, not a skip.
  if (url) return open(parseRethinkDbUrl(url).servers[0]!)
  if (RETHINKDB_BIN) {
    const server = await rethinkDbProcess('suite')
    await server.start()
    return open({ host: '127.0.0.1', port: server.driverPort }, () => server.destroy())
  }
  if (!(await dockerAnswers())) {
    announceSkipOnce()
    return null
  }
  // Loaded only when Docker is there, so runs without it stay fast.
  const { GenericContainer, Wait } = await import('testcontainers')
  const container = await new GenericContainer('rethinkdb:2.4')
    .withExposedPorts(28015)
    .withWaitStrategy(Wait.forLogMessage(/Server ready/))
    .withStartupTimeout(120_000)
    .start()
  return open({ host: container.getHost(), port: container.getMappedPort(28015) }, () =>
    container.stop().then(() => undefined)
  )
}

async function open(
  address: { host: string; port: number },
  stopContainer?: () => Promise<void>
): Promise<RethinkDbTestServer> {
  const db = `plumage_test_${randomBytes(6).toString('hex')}`
  const connection = await connectRethinkDb(`rethinkdb://${address.host}:${address.port}/${db}`, { timeoutMs: 15_000 })
  const { r } = connection
  await r.dbCreate(db).run()
  let stopped: Promise<void> | undefined
  return {
    r,
    host: address.host,
    port: address.port,
    db,
    // Once, whoever calls it: drops the database over a connection of its own (a test may have
    // replaced or drained the module-wide pool), then drains the pool and stops the container.
    stop: () =>
      (stopped ??= (async () => {
        try {
          const own = await r.connect({ host: address.host, port: address.port, timeout: 10 })
          try {
            // The run's database and any a suite made beside it (`<db>_<n>`).
            const names = (await r.dbList().run(own)).filter((name) => name === db || name.startsWith(`${db}_`))
            for (const name of names) {
              await r
                .dbDrop(name)
                .run(own)
                .catch((error: unknown) => {
                  if (!/does not exist/.test(String((error as Error).message))) throw error
                })
            }
          } finally {
            await own.close()
          }
        } finally {
          await connection.close().catch(() => undefined)
          await stopContainer?.()
        }
      })())
  }
}

/**
 * One loud line per test run, however many suite files skip: jest's workers share their parent's
 * pid, so the first file to skip claims a marker named after it and the others stay quiet.
 */
function announceSkipOnce(): void {
  try {
    closeSync(openSync(join(tmpdir(), `plumage-rethinkdb-skipped-${process.ppid}`), 'wx'))
    // Straight to stderr: jest drops console output of a file whose tests are all skipped.
    process.stderr.write(`\n${SKIP_MESSAGE}\n\n`)
  } catch {
    // Another suite file of this run already said it.
  }
}

/** A cheap, bounded check that a Docker engine is listening: GET /_ping on its socket or TCP port. */
async function dockerAnswers(): Promise<boolean> {
  const host = process.env.DOCKER_HOST
  if (host?.startsWith('tcp://')) {
    const { hostname, port } = new URL(host.replace(/^tcp:/, 'http:'))
    return tcpAnswers(hostname, Number(port || 2375))
  }
  const sockets = host?.startsWith('unix://')
    ? [host.slice('unix://'.length)]
    : [
        '/var/run/docker.sock',
        join(homedir(), '.docker/run/docker.sock'),
        join(homedir(), '.docker/desktop/docker.sock'),
        ...(process.env.XDG_RUNTIME_DIR
          ? [join(process.env.XDG_RUNTIME_DIR, 'docker.sock'), join(process.env.XDG_RUNTIME_DIR, 'podman/podman.sock')]
          : [])
      ]
  for (const socketPath of sockets) {
    if (existsSync(socketPath) && (await pingSocket(socketPath))) return true
  }
  return false
}

function pingSocket(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', method: 'GET', timeout: DOCKER_PROBE_TIMEOUT_MS }, (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(false))
    req.end()
  })
}

function tcpAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: DOCKER_PROBE_TIMEOUT_MS })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(false))
  })
}
