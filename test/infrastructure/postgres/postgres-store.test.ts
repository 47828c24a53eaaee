import { afterAll, describe } from '@jest/globals'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { storeContract } from '../../contract/store.contract.js'
import { discoverPostgres } from '../../support/postgres-server.js'

// Integration suite: a real PostgreSQL (POSTGRES_URL, or a throw-away server when the binaries are
// installed). Without one it is skipped with one loud line (never on CI).
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip

afterAll(async () => {
  await database?.stop()
})

withServer('PostgresStore', () => {
  const db = new PostgresDatabase({ url: database?.url ?? 'postgres://unused' })
  const factory = new PostgresStoreFactory(db)
  afterAll(() => factory.close())

  storeContract('PostgreSQL', async ({ name, ...options }) => {
    const store = factory.create(name, options)
    await store.setup!()
    return { store, close: async () => undefined }
  })
})
