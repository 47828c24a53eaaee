import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { freePort } from './free-port.js'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/*
 * A RethinkDB server process the test owns, so it can kill it (SIGKILL, as a crash) and start it
 * again on the same data: RETHINKDB_BIN names the `rethinkdb` executable. Everything binds to
 * 127.0.0.1 only. Without RETHINKDB_BIN the suites that need it are skipped with one loud line.
 */

export const RETHINKDB_BIN =
  process.env.RETHINKDB_BIN && existsSync(process.env.RETHINKDB_BIN) ? process.env.RETHINKDB_BIN : undefined

export interface RethinkDbProcess {
  name: string
  driverPort: number
  clusterPort: number
  /** The running server's process id (undefined when it is not running). */
  readonly pid: number | undefined
  /** Starts (again) on the same data directory; resolves once the driver port accepts connections. */
  start(): Promise<void>
  /** SIGKILL: the server dies as in a crash. Resolves when the process is gone. */
  kill(): Promise<void>
  /** Kills the process (if running) and deletes its data directory. */
  destroy(): Promise<void>
}

/** `join`: the server of a cluster to join; `args`: more command-line options (e.g. `--driver-tls-key`). */
export async function rethinkDbProcess(
  name: string,
  options: { join?: RethinkDbProcess; args?: string[] } = {}
): Promise<RethinkDbProcess> {
  if (!RETHINKDB_BIN) throw new Error('RETHINKDB_BIN is not set')
  const directory = await mkdtemp(join(tmpdir(), `plumage-rdb-${name}-`))
  const driverPort = await freePort()
  const clusterPort = await freePort()
  let child: ChildProcess | undefined
  const args = [
    '--directory',
    join(directory, 'data'),
    '--server-name',
    name,
    '--bind',
    '127.0.0.1',
    '--driver-port',
    String(driverPort),
    '--cluster-port',
    String(clusterPort),
    '--no-http-admin',
    '--no-update-check',
    ...(options.join ? ['--join', `127.0.0.1:${options.join.clusterPort}`] : []),
    ...(options.args ?? [])
  ]
  const server: RethinkDbProcess = {
    name,
    driverPort,
    clusterPort,
    get pid() {
      return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined
    },
    async start() {
      // Started already (rethinkDbProcess starts it): a second process would be left running.
      if (child && child.exitCode === null && child.signalCode === null) return
      child = spawn(RETHINKDB_BIN!, args, { stdio: 'ignore' })
      const deadline = Date.now() + 60_000
      while (!(await accepts(driverPort))) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`rethinkdb ${name} did not start (exit ${child.exitCode})`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    },
    async kill() {
      const running = child
      if (!running || running.exitCode !== null || running.signalCode !== null) return
      const gone = new Promise((resolve) => running.once('exit', resolve))
      running.kill('SIGKILL')
      await gone
    },
    async destroy() {
      await server.kill()
      await rm(directory, { recursive: true, force: true })
    }
  }
  await server.start()
  return server
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
