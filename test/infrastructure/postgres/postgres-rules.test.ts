import { afterAll, describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import type { Delivery } from '../../../src/application/channel.js'
import { useRules, type RulesDefinition } from '../../../src/application/rules/index.js'
import { Gateway } from '../../../src/application/transport/gateway.js'
import type { Connection } from '../../../src/domain/service/service.js'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { checkNoLeaks } from '../../application/rules/no-leaks.js'
import { noteSchemas, type Note } from '../../application/rules/rules-harness.js'
import { discoverPostgres } from '../../support/postgres-server.js'

/*
 * Rules on PostgreSQL: the no-leak property on a real store (its SQL evaluates the rules' queries, its log
 * publishes the events), and a change of role on one instance reaching the connections of another within 1 s.
 * Two apps with their own store factory on one database are two instances (as in postgres-events.test.ts).
 * Needs PostgreSQL (POSTGRES_URL, or the binaries for a throw-away server); otherwise the loud SKIPPED line.
 */
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip
const factories: PostgresStoreFactory[] = []

afterAll(async () => {
  for (const factory of factories) await factory.close()
  await database?.stop()
})

async function factory(url: string): Promise<PostgresStoreFactory> {
  const made = new PostgresStoreFactory(new PostgresDatabase({ url, timeoutMs: 5000 }), { timeoutMs: 60_000 })
  factories.push(made)
  return made
}

/** Waits until `published()` reaches `expected` (the log publishes after the write answered), at most 5 s. */
async function drained(published: () => number, expected: number): Promise<void> {
  for (let waited = 0; published() < expected && waited < 5000; waited += 5)
    await new Promise((resolve) => setTimeout(resolve, 5))
}

withServer('rules on PostgreSQL', () => {
  const seed = Number(process.env.RULES_SEED ?? Date.now() % 1_000_000)

  it(`no user receives a record, field or event they could not get (seed ${seed})`, async () => {
    const stores = await factory(await database!.fresh())
    const triples = await checkNoLeaks({ seed, trials: 42, writes: 16, store: () => stores.create('notes'), drained })
    expect(triples).toBeGreaterThanOrEqual(2000)
  }, 300_000)

  it("a user's new role changes what their connections on another instance receive, within 1 s", async () => {
    const url = await database!.fresh()
    const notesRules: RulesDefinition = (user, { can }) => {
      if (!user) return
      can('read', 'notes', { to: null })
      can('read', 'notes', { to: user.id })
      if (user.role === 'admin') can('read', 'notes')
    }
    const instance = async () => {
      const stores = await factory(url)
      const app = new App()
      app.use('users', new AdapterService(stores.create('users')))
      app.use('notes', new AdapterService(stores.create<Note>('notes')), { schemas: noteSchemas })
      useRules(app, { notes: notesRules })
      const gateway = new Gateway(app)
      const deliveries: Delivery[] = []
      gateway.onDelivery((delivery) => deliveries.push(delivery))
      app.publish(() => app.channel('everyone'))
      await app.setup()
      return { app, gateway, deliveries }
    }
    const a = await instance()
    const b = await instance()
    const bob = (await a.app.service('users').create({ email: 'bob@x.io', role: 'user' })) as Record<string, unknown>
    const connection: Connection = { provider: 'socketio', user: bob }
    b.gateway.open(connection)
    b.app.channel('everyone').join(connection)
    b.app.emit('login', { user: bob }, { connection })
    const receives = async (text: string, to: string) => {
      await a.app.service('notes').create({ text, to })
      for (let waited = 0; waited < 1000; waited += 10) {
        if (b.deliveries.some((delivery) => (delivery.data as Note).text === text)) return true
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      return false
    }
    expect(await receives('for someone else', 'nobody')).toBe(false)
    const started = Date.now()
    await a.app.service('users').patch(bob.id as string, { role: 'admin' })
    for (let waited = 0; (connection.user as { role?: string }).role !== 'admin' && waited < 1000; waited += 5)
      await new Promise((resolve) => setTimeout(resolve, 5))
    expect(Date.now() - started).toBeLessThan(1000)
    expect(await receives('for anyone with admin', 'nobody')).toBe(true)
    for (const { app } of [a, b]) await app.teardown()
  }, 60_000)
})
