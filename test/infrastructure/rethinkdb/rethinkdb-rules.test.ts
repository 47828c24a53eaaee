import { afterAll, describe, expect, it } from '@jest/globals'
import { RethinkDbStoreFactory } from '../../../src/infrastructure/rethinkdb/rethinkdb-store-factory.js'
import { checkNoLeaks } from '../../application/rules/no-leaks.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

// The no-leak property of rules (test/application/rules/no-leaks.ts) on RethinkDB: its ReQL evaluates the rules'
// queries, its event log publishes the events. Needs a real RethinkDB (RETHINKDB_URL, or Docker); skipped with the
// run's one loud line otherwise.
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip
let factory: RethinkDbStoreFactory | undefined

afterAll(async () => {
  await factory?.close()
  await server?.stop()
})

withServer('rules on RethinkDB', () => {
  const seed = Number(process.env.RULES_SEED ?? Date.now() % 1_000_000)

  it(`no user receives a record, field or event they could not get (seed ${seed})`, async () => {
    factory = new RethinkDbStoreFactory(`rethinkdb://${server!.host}:${server!.port}/${server!.db}`, {
      timeoutMs: 60_000
    })
    const drained = async (published: () => number, expected: number) => {
      for (let waited = 0; published() < expected && waited < 5000; waited += 5)
        await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const triples = await checkNoLeaks({ seed, trials: 42, writes: 16, store: () => factory!.create('notes'), drained })
    expect(triples).toBeGreaterThanOrEqual(2000)
  }, 300_000)
})
