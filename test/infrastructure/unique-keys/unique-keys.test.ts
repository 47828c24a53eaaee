import { afterAll, describe, expect, it } from '@jest/globals'
import type { Data } from '../../../src/domain/service/service.js'
import type { Store } from '../../../src/domain/store/store.js'
import type { StoreFactory } from '../../../src/domain/store/store-factory.js'
import { FakePasswordHasher } from '../../support/fake-password-hasher.js'
import { JsonWebTokenService } from '../../../src/infrastructure/auth/json-web-token-service.js'
import { RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { AjvSchemaValidator } from '../../../src/infrastructure/schema/ajv-schema-validator.js'
import { createReferenceApp } from '../../../src/reference-app.js'
import { keyId, RethinkDbUniqueKeys } from '../../../src/infrastructure/rethinkdb/rethinkdb-unique-keys.js'
import { discoverRethinkDb, type RethinkDbTestServer } from '../../support/rethinkdb-server.js'

// The UniqueKeys contract runs on both adapters from the kit: memory.contract.test.ts, rethinkdb.contract.test.ts.

// Needs a real RethinkDB (RETHINKDB_URL, or Docker); skipped with the run's one loud line otherwise.
const server: RethinkDbTestServer | null = await discoverRethinkDb()
afterAll(async () => {
  await server?.stop()
})

const withRethinkDb = server ? describe : describe.skip
withRethinkDb('RethinkDbUniqueKeys', () => {
  it('keys rows by a fixed-length hash of scope and value', () => {
    expect(keyId('users.email', 'a@x.io')).toMatch(/^[0-9a-f]{64}$/)
    expect(keyId('users.email', 'a@x.io')).not.toBe(keyId('users.emai', 'la@x.io'))
  })
})

withRethinkDb('the reference app on RethinkDB', () => {
  it('answers 100 simultaneous signups with one email with exactly one 201 and 99 × 409', async () => {
    const users = new RethinkDbStore({ r: server!.r, db: server!.db, table: 'signup_users', watch: false })
    await users.init()
    const stores: StoreFactory = {
      create: <T extends Data>(name: string) =>
        (name === 'users'
          ? users
          : new RethinkDbStore({
              r: server!.r,
              db: server!.db,
              table: `signup_${name}`,
              watch: false
            })) as unknown as Store<T>,
      close: async () => {},
      health: async () => ({ ready: true, checks: {}, problems: [] })
    }
    const app = createReferenceApp({
      stores,
      validator: new AjvSchemaValidator(),
      uniqueKeys: new RethinkDbUniqueKeys({ r: server!.r, db: server!.db, table: 'signup_unique_keys' }),
      authentication: {
        hasher: new FakePasswordHasher(),
        tokens: new JsonWebTokenService({ secret: 'unique-keys-test-secret' })
      }
    })
    await app.setup()
    const signups = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) =>
        app
          .service('users')
          .create(
            { email: i % 2 ? 'Race@Example.com' : ' race@example.COM ', password: `password-${i}` },
            { provider: 'rest' }
          )
      )
    )
    const created = signups.filter((result) => result.status === 'fulfilled')
    const refused = signups.filter((result): result is PromiseRejectedResult => result.status === 'rejected')
    expect(created).toHaveLength(1)
    expect(refused).toHaveLength(99)
    for (const { reason } of refused)
      expect(reason).toMatchObject({ name: 'Conflict', code: 409, message: 'email already registered' })
    expect(await users.count({ op: 'and', filters: [] })).toBe(1)
    // Removing the account frees the email for a new signup.
    const [record] = await users.find({ filter: { op: 'and', filters: [] }, sort: [], skip: 0 })
    await app.service('users').remove(record!.id as string)
    await expect(
      app.service('users').create({ email: 'race@example.com', password: 'password-again' }, { provider: 'rest' })
    ).resolves.toMatchObject({ email: 'race@example.com' })
    await app.teardown()
  }, 60_000)

  it('keeps emails as typed, logs in by them in any case, and still finds a record stored lower-cased by an earlier version', async () => {
    const table = (name: string) =>
      new RethinkDbStore({ r: server!.r, db: server!.db, table: `case_${name}`, watch: false })
    const users = table('users')
    await users.init()
    const stores: StoreFactory = {
      create: <T extends Data>(name: string) => (name === 'users' ? users : table(name)) as unknown as Store<T>,
      close: async () => {},
      health: async () => ({ ready: true, checks: {}, problems: [] })
    }
    const uniqueKeys = new RethinkDbUniqueKeys({ r: server!.r, db: server!.db, table: 'case_unique_keys' })
    const app = createReferenceApp({
      stores,
      validator: new AjvSchemaValidator(),
      uniqueKeys,
      authentication: {
        hasher: new FakePasswordHasher(),
        tokens: new JsonWebTokenService({ secret: 'unique-keys-test-secret' })
      }
    })
    await app.setup()
    const login = (email: string, password: string) =>
      app.service('authentication').create({ strategy: 'local', email, password }, { provider: 'rest' })
    // What an earlier version left: the record lower-cased, its key claimed without a holder.
    await users.create([{ email: 'old@example.com', password: 'fake$old-password' }], {})
    await uniqueKeys.claim('users.email', 'old@example.com')
    await expect(login('Old@Example.COM', 'old-password')).resolves.toMatchObject({
      user: { email: 'old@example.com' }
    })
    await expect(
      app.service('users').create({ email: 'OLD@example.com', password: 'password-x' }, { provider: 'rest' })
    ).rejects.toMatchObject({ code: 409 })
    const created = (await app
      .service('users')
      .create({ email: 'Ann.Lee@Example.com', password: 'ann-password' }, { provider: 'rest' })) as {
      id: string
      email: string
    }
    expect(created).toMatchObject({ email: 'Ann.Lee@Example.com' })
    expect(await uniqueKeys.holder('users.email', 'ann.lee@example.com')).toBe(created.id)
    await expect(login('ann.lee@example.com', 'ann-password')).resolves.toMatchObject({
      user: { id: created.id, email: 'Ann.Lee@Example.com' }
    })
    await expect(login('ann.lee@example.com', 'wrong-password')).rejects.toMatchObject({ code: 401 })
    await app.teardown()
  }, 60_000)
})
