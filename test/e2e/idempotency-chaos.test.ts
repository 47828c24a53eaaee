import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { expectExactlyOnce } from '../support/chaos-expect.js'
import { runChaos } from '../support/chaos-harness.js'
import { postgresChaosStore } from '../support/chaos-stores.js'
import { builtInstances, type Instance, type Instances } from '../support/app-instances.js'
import { discoverPostgres } from '../support/postgres-server.js'

/*
 * Chaos for idempotency keys (issue 40) on PostgreSQL, small (test/support/chaos-harness.ts; `npm run bench:chaos`
 * runs it with 100,000 writes): two real instances of the built server on one database; plumage's clients
 * (socket.io, idempotentWrites, a live query each) behind TCP proxies cut at random; duplicate sends (one key, sent
 * twice at once); an instance SIGKILLed right after the database shows a write whose reply it was holding back,
 * its clients moved to the other, the instance restarted and its clients moved back. Afterwards every write is in
 * the database exactly once and every client's live view equals a fresh find.
 */
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip
if (!database) process.stderr.write('SKIPPED: idempotency chaos e2e (no PostgreSQL server and no binaries)\n')

let instances: Instances

beforeAll(async () => {
  if (database) instances = await builtInstances('idempotency-chaos')
}, 120_000)
afterAll(async () => {
  await instances?.cleanup()
  await database?.stop()
})

withServer('idempotency keys under chaos on PostgreSQL', () => {
  it('loses and doubles no write through random drops, duplicate sends and SIGKILL between commit and reply', async () => {
    const store = postgresChaosStore(await database!.fresh())
    const clients = 6
    const started: Instance[] = []
    try {
      const report = await runChaos({
        store,
        start: async (env) => {
          const instance = await instances.start(env)
          started.push(instance)
          return instance
        },
        client: 'plumage',
        clients,
        writes: 120,
        kills: 1,
        concurrency: 2,
        run: 'e2e',
        // 61-second tokens: every client renews its token each second, through the drops and the kill.
        tokenLifetime: '61s',
        log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`)
      })
      process.stderr.write(`chaos on postgres: ${JSON.stringify(report)}\n`)
      // What the instances logged as errors says why a call failed.
      const errors = started.flatMap((instance) => instance.logs.filter((entry) => entry.level >= 50))
      if (errors.length) process.stderr.write(`${errors.map((entry) => JSON.stringify(entry)).join('\n')}\n`)
      expectExactlyOnce(report, clients)
      expect(report.refreshes).toBeGreaterThan(0)
    } finally {
      await store.close()
    }
  }, 150_000)
})
