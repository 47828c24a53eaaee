import { Sessions } from '../../../src/application/sessions/sessions.js'
import { afterAll, describe } from '@jest/globals'
import pg from 'pg'
import { PostgresConnectionSessions } from '../../../src/infrastructure/postgres/postgres-connection-sessions.js'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresLoginAttempts } from '../../../src/infrastructure/postgres/postgres-login-attempts.js'
import { PostgresSessionStore } from '../../../src/infrastructure/postgres/postgres-session-store.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { PostgresUniqueKeys } from '../../../src/infrastructure/postgres/postgres-unique-keys.js'
import {
  runConnectionSessionsContract,
  runKeyedWritesContract,
  runLoginAttemptsContract,
  runSessionStoreContract,
  runStoreContract,
  runUniqueKeysContract
} from '../../../src/testing/index.js'
import { discoverPostgres } from '../../support/postgres-server.js'

// The PostgreSQL adapters against the kit, every case, on a real server (POSTGRES_URL, or a throw-away one from
// the installed binaries); without one they are skipped with one loud line (never on CI). Every store opens its
// own pool and event log, as a process would; every case of the other ports gets a schema of its own.
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip
const closers: (() => Promise<void>)[] = []
const schemas = new Map<string, string>()

afterAll(async () => {
  for (const close of closers.splice(0)) await close()
  await database?.stop()
})

/** A pool whose tables live in the schema named after `name` (made on first use): what one case sees. */
async function poolFor(name: string): Promise<PostgresDatabase> {
  let schema = schemas.get(name)
  if (!schema) {
    schema = `case_${schemas.size + 1}`
    schemas.set(name, schema)
    const admin = new pg.Client({ connectionString: database!.url })
    await admin.connect()
    await admin.query(`CREATE SCHEMA ${schema}`)
    await admin.end()
  }
  const url = new URL(database!.url)
  url.searchParams.set('options', `-c search_path=${schema}`)
  const db = new PostgresDatabase({ url: url.toString() })
  closers.push(() => db.close())
  return db
}

let cases = 0
const fresh = () => poolFor(`case ${++cases}`)

withServer('on a real server', () => {
  runStoreContract({
    adapter: 'postgres',
    cases: 'all',
    open: async ({ name, watch, ...options }) => {
      const factory = new PostgresStoreFactory(new PostgresDatabase({ url: database!.url }), { watch })
      const store = factory.create(name, options)
      await store.setup!()
      return { store, close: () => factory.close() }
    }
  })
  // Idempotency keys: a store opened twice over one name is two pools, as two processes have.
  runKeyedWritesContract({
    adapter: 'postgres',
    cases: 'all',
    open: async ({ name, watch, ...options }) => {
      const factory = new PostgresStoreFactory(new PostgresDatabase({ url: database!.url }), { watch })
      const store = factory.create(name, options)
      await store.setup!()
      return { store, close: () => factory.close() }
    }
  })
  // Shared keys: one schema, a pool per instance (as each process has).
  runUniqueKeysContract({
    adapter: 'postgres',
    cases: 'all',
    open: async (shared) => new PostgresUniqueKeys(shared === undefined ? await fresh() : await poolFor(shared))
  })
  runSessionStoreContract({
    sessions: (store, clock, tokens) => new Sessions(store, tokens, clock),
    adapter: 'postgres',
    cases: 'all',
    open: async () => new PostgresSessionStore(await fresh())
  })
  runLoginAttemptsContract({
    adapter: 'postgres',
    cases: 'all',
    open: async () => new PostgresLoginAttempts(await fresh())
  })
  runConnectionSessionsContract({
    adapter: 'postgres',
    cases: 'all',
    open: async ({ name, clock, windowMs }) =>
      new PostgresConnectionSessions({
        db: await poolFor(name),
        clock,
        windowMs,
        secret: 'a secret of at least sixteen characters'
      })
  })
})
