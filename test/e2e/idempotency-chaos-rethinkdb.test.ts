import { afterAll, describe, expect, it } from '@jest/globals'
import { expectExactlyOnce } from '../support/chaos-expect.js'
import { runChaos } from '../support/chaos-harness.js'
import { rethinkdbChaosStore, storeHonoursKeys } from '../support/chaos-stores.js'
import { builtInstances, type Instances } from '../support/app-instances.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'

/*
 * The chaos of idempotency-chaos.test.ts (test/support/chaos-harness.ts) on RethinkDB: two built instances, plumage's
 * clients behind proxies cut at random, duplicate sends, a SIGKILL between commit and reply. It runs only when the
 * RethinkDB store honours idempotency keys — asked of the running app (the same keyed create twice, then how many
 * rows) — and skips with one loud line otherwise, or without a RethinkDB.
 */
const server = await discoverRethinkDb()
let instances: Instances | undefined
let honours = false
if (server) {
  instances = await builtInstances('idempotency-chaos-rethinkdb')
  const url = `rethinkdb://${server.host}:${server.port}/${server.db}_probe`
  const probe = rethinkdbChaosStore(server.r, url)
  const instance = await instances.start(probe.env)
  honours = await storeHonoursKeys(instance.url, probe).finally(() => instance.stop())
  if (!honours) {
    process.stderr.write('SKIPPED: idempotency chaos on RethinkDB (its store does not honour idempotency keys yet)\n')
    // Jest runs no hooks in a file whose tests are all skipped: the server and the build go now.
    await instances.cleanup()
    await server.stop()
  }
}
const withKeys = server && honours ? describe : describe.skip

afterAll(async () => {
  await instances?.cleanup()
  await server?.stop()
})

withKeys('idempotency keys under chaos on RethinkDB', () => {
  it('loses and doubles no write through random drops, duplicate sends and SIGKILL between commit and reply', async () => {
    const store = rethinkdbChaosStore(server!.r, `rethinkdb://${server!.host}:${server!.port}/${server!.db}_chaos`)
    const report = await runChaos({
      store,
      start: (env) => instances!.start(env),
      client: 'plumage',
      clients: 6,
      writes: 120,
      concurrency: 2,
      kills: 1,
      run: 'e2e',
      // 61-second tokens: every client renews its token each second, through the drops and the kill.
      tokenLifetime: '61s'
    })
    process.stderr.write(`chaos on rethinkdb: ${JSON.stringify(report)}\n`)
    expectExactlyOnce(report, 6)
    expect(report.refreshes).toBeGreaterThan(0)
  }, 90_000)
})
