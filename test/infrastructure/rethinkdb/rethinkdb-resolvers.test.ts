import { afterAll, describe, it } from '@jest/globals'
import type { Data } from '../../../src/domain/service/service.js'
import type { Store } from '../../../src/domain/store/store.js'
import type { StoreFactory } from '../../../src/domain/store/store-factory.js'
import { RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { RethinkDbUniqueKeys } from '../../../src/infrastructure/rethinkdb/rethinkdb-unique-keys.js'
import { AjvSchemaValidator } from '../../../src/infrastructure/schema/ajv-schema-validator.js'
import { createReferenceApp } from '../../../src/reference-app.js'
import { countingStores, expectOneUsersReadPerFind, seedChat } from '../../support/resolver-batching.js'
import { discoverRethinkDb, type RethinkDbTestServer } from '../../support/rethinkdb-server.js'

// The reference chat's message authors on RethinkDB: one store read per find of 25 messages. Needs a real
// RethinkDB (RETHINKDB_URL, RETHINKDB_BIN or Docker); skipped with the run's one loud line otherwise.
const server: RethinkDbTestServer | null = await discoverRethinkDb()
afterAll(async () => {
  await server?.stop()
})

const withRethinkDb = server ? describe : describe.skip
withRethinkDb('resolved authors on RethinkDB', () => {
  it('populate 25 messages with one read of the users table', async () => {
    const tables: RethinkDbStore<Data>[] = []
    const inner: StoreFactory = {
      create: <T extends Data>(name: string) => {
        const store = new RethinkDbStore({ r: server!.r, db: server!.db, table: `resolvers_${name}`, watch: false })
        tables.push(store)
        return store as unknown as Store<T>
      },
      close: async () => {},
      health: async () => ({ ready: true, checks: {}, problems: [] })
    }
    const { stores, reads } = countingStores(inner)
    const app = createReferenceApp({
      stores,
      validator: new AjvSchemaValidator(),
      uniqueKeys: new RethinkDbUniqueKeys({ r: server!.r, db: server!.db, table: 'resolvers_unique_keys' })
    })
    for (const table of tables) await table.init()
    await app.setup()
    await seedChat(app)
    await expectOneUsersReadPerFind(app, reads)
  })
})
