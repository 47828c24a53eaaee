import { existsSync } from 'node:fs'
import { rethinkDbProcess } from '../../test/support/rethinkdb-process.js'

/** A RethinkDB server this bench runs itself (RETHINKDB_BIN), in a temp folder, on free ports of 127.0.0.1. */
export interface OwnRethinkDb {
  url: string
  pid: number
  stop(): Promise<void>
}

/**
 * Starts $RETHINKDB_BIN (a `rethinkdb` executable) in a fresh temp folder, bound to 127.0.0.1, with the test suites'
 * process helper, and resolves once its driver port accepts connections; undefined when RETHINKDB_BIN is not set.
 */
export async function startOwnRethinkDb(): Promise<OwnRethinkDb | undefined> {
  const bin = process.env.RETHINKDB_BIN
  if (!bin) return undefined
  if (!existsSync(bin)) throw new Error(`RETHINKDB_BIN names no file: ${bin}`)
  const server = await rethinkDbProcess('bench')
  await server.start()
  return { url: `rethinkdb://127.0.0.1:${server.driverPort}`, pid: server.pid!, stop: () => server.destroy() }
}
