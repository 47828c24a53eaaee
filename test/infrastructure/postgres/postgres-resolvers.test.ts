import { afterAll, describe, expect, it } from '@jest/globals'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { PostgresUniqueKeys } from '../../../src/infrastructure/postgres/postgres-unique-keys.js'
import { AjvSchemaValidator } from '../../../src/infrastructure/schema/ajv-schema-validator.js'
import { createReferenceApp } from '../../../src/reference-app.js'
import { discoverPostgres } from '../../support/postgres-server.js'
import { countingStores, expectOneUsersReadPerFind, seedChat } from '../../support/resolver-batching.js'

// The reference chat's message authors on PostgreSQL: one store read, and one SQL statement on the users table,
// per find of 25 messages (Feathers' `users.get` per message would send 25). Skipped with the loud line without.
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip
afterAll(async () => {
  await database?.stop()
})

withServer('resolved authors on PostgreSQL', () => {
  it('populate 25 messages with one query of the users table', async () => {
    const db = new PostgresDatabase({ url: await database!.fresh() })
    const statements: string[] = []
    const query = db.query.bind(db)
    db.query = ((operation: string, text: string, ...rest: never[]) => {
      statements.push(text)
      return query(operation, text, ...rest)
    }) as typeof db.query
    const factory = new PostgresStoreFactory(db, { watch: false })
    const { stores, reads } = countingStores(factory)
    const app = createReferenceApp({
      stores,
      validator: new AjvSchemaValidator(),
      uniqueKeys: new PostgresUniqueKeys(db)
    })
    try {
      await app.setup()
      await seedChat(app)
      const before = statements.length
      await expectOneUsersReadPerFind(app, reads)
      // Two finds (external, internal): each one statement on messages and one on users.
      const onUsers = statements.slice(before).filter((text) => /\busers\b/.test(text))
      expect(onUsers).toHaveLength(2)
      expect(onUsers[0]).toMatch(/^SELECT/)
    } finally {
      await app.teardown()
      await factory.close()
    }
  })
})
