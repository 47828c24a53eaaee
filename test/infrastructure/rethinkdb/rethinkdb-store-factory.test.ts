import { describe, expect, it } from '@jest/globals'
import { createServer } from 'node:net'
import { RethinkDbStoreFactory } from '../../../src/infrastructure/rethinkdb/rethinkdb-store-factory.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

describe('RethinkDbStoreFactory.ping', () => {
  it('resolves false within its timeout while no server answers', async () => {
    const factory = new RethinkDbStoreFactory(`rethinkdb://127.0.0.1:${await closedPort()}/plumage`, { timeoutMs: 500 })
    await expect(factory.ping(100)).resolves.toBe(false)
    await factory.close()
  })
})

// Needs a real server (RETHINKDB_URL or Docker); otherwise the run prints the loud SKIPPED line.
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

withServer('RethinkDbStoreFactory.ping against a server', () => {
  it('resolves true when the server answers a query', async () => {
    const { host, port, db } = server!
    // The factory opens its own pool on the module-level `r`, which replaces the test server's pool.
    await server!.stop()
    const factory = new RethinkDbStoreFactory(`rethinkdb://${host}:${port}/${db}`, { timeoutMs: 15_000 })
    await expect(factory.ping(15_000)).resolves.toBe(true)
    await factory.close()
  })
})
