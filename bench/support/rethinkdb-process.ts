import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, stopChild, track } from './processes.js'

/** A RethinkDB server this bench runs itself (RETHINKDB_BIN), in a temp folder, on free ports of 127.0.0.1. */
export interface OwnRethinkDb {
  url: string
  pid: number
  stop(): Promise<void>
}

/**
 * Starts $RETHINKDB_BIN (a `rethinkdb` executable) in a fresh temp folder, bound to 127.0.0.1, and resolves once
 * its driver port accepts connections (within 60 s); undefined when RETHINKDB_BIN is not set.
 */
export async function startOwnRethinkDb(): Promise<OwnRethinkDb | undefined> {
  const bin = process.env.RETHINKDB_BIN
  if (!bin) return undefined
  if (!existsSync(bin)) throw new Error(`RETHINKDB_BIN names no file: ${bin}`)
  const directory = await mkdtemp(join(tmpdir(), 'plumage-bench-rdb-'))
  const [driverPort, clusterPort] = [await freePort(), await freePort()]
  const child = track(
    spawn(
      bin,
      [
        '--directory',
        join(directory, 'data'),
        '--bind',
        '127.0.0.1',
        '--driver-port',
        String(driverPort),
        '--cluster-port',
        String(clusterPort),
        '--no-http-admin',
        '--no-update-check'
      ],
      { stdio: 'ignore' }
    )
  )
  const stop = async () => {
    await stopChild(child, 'SIGTERM', 10_000)
    await rm(directory, { recursive: true, force: true })
  }
  const deadline = Date.now() + 60_000
  while (!(await accepts(driverPort))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop()
      throw new Error(`rethinkdb (${bin}) did not start (exit ${child.exitCode})`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { url: `rethinkdb://127.0.0.1:${driverPort}`, pid: child.pid!, stop }
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
