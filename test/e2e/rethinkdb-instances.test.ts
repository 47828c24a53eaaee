import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { runMultiInstanceContract, type SharedDatabase } from '../../src/testing/index.js'
import {
  builtInstances,
  expectExactlyOnce,
  listen,
  settingsEnv,
  signUp,
  until,
  type Instance,
  type Instances,
  type Listener
} from '../support/app-instances.js'
import { socketIoClients } from '../support/instance-clients.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/*
 * Several real instances of the built server (`node dist/plumage.mjs`) on one RethinkDB database: the
 * multi-instance contract (src/testing/instances) with direct writes made with ReQL and an instance reaching the
 * database through a TCP proxy for the outage case, then what only RethinkDB has: duplicate tables left by
 * concurrent tableCreate calls, and the one instance that follows a table's direct writes (its lease). Needs a
 * RethinkDB server (RETHINKDB_URL, RETHINKDB_BIN or Docker); otherwise the run prints the loud SKIPPED line.
 */
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

let instances: Instances
const running: Instance[] = []
const listeners: Listener[] = []
const proxies: TcpProxy[] = []
let database = 0

/** A fresh database of this run (dropped with it, see discoverRethinkDb) and its URL. */
function freshDatabase(host = server!.host, port = server!.port): { db: string; url: string } {
  const db = `${server!.db}_${++database}`
  return { db, url: `rethinkdb://${host}:${port}/${db}` }
}

async function start(env: Record<string, string>): Promise<Instance> {
  const instance = await instances.start(env)
  running.push(instance)
  return instance
}

beforeAll(async () => {
  if (server) instances = await builtInstances('instances')
}, 60_000)

afterAll(async () => {
  for (const listener of listeners) listener.socket.disconnect()
  await Promise.all(running.map((instance) => instance.stop()))
  for (const proxy of proxies) await proxy.close()
  await instances?.cleanup()
  await server?.stop()
})

/** A fresh database for one case of the contract. */
function sharedDatabase(): Promise<SharedDatabase> {
  const { db, url } = freshDatabase()
  const r = server!.r
  const table = (name: string) => r.db(db).table(name)
  return Promise.resolve({
    start: (settings) => instances.start({ RETHINKDB_URL: url, ...settingsEnv(settings) }),
    tables: () =>
      r.db('rethinkdb').table('table_config').filter({ db })('name').coerceTo('array').run() as Promise<string[]>,
    async checkSchema() {
      expect(await table('plumage_events').indexList().run()).toContain('ts')
    },
    direct: {
      insert: async (name, record) => void (await table(name).insert(record).run()),
      patch: async (name, id, data) => void (await table(name).get(id).update(data).run()),
      remove: async (name, id) => void (await table(name).get(id).delete().run())
    },
    async startCutOff() {
      const proxy = await startTcpProxy(server!.host, server!.port)
      proxies.push(proxy)
      const instance = await instances.start({ RETHINKDB_URL: `rethinkdb://127.0.0.1:${proxy.port}/${db}` })
      return { instance, cut: () => proxy.cut(), restore: () => proxy.restore() }
    }
  })
}

withServer('on a real server', () => {
  runMultiInstanceContract({
    adapter: 'rethinkdb',
    // Not 'direct writes / back to back: …': the table feed squashes a record's changes made within 50 ms into
    // one (a create and a remove of one record within it publish nothing).
    cases: [
      'start',
      'events',
      'database outage',
      'direct writes / are published once on every instance, each once the one before was',
      'direct writes / a direct write made while a client was away reaches it when it resumes on another instance, in the log’s order',
      'resume'
    ],
    database: sharedDatabase,
    clients: socketIoClients
  })
})

withServer('several instances on one RethinkDB database: what only RethinkDB has', () => {
  it('repairs duplicate tables left by an earlier race, and refuses to start while a duplicate holds records', async () => {
    const r = server!.r
    const tables = (db: string) =>
      r.db('rethinkdb').table('table_config').filter({ db })('name').coerceTo('array').run() as Promise<string[]>
    // What concurrent tableCreate calls can leave behind (RethinkDB accepts several of them at once).
    let db = ''
    let url = ''
    for (let attempt = 0; attempt < 20; attempt++) {
      ;({ db, url } = freshDatabase())
      await r.dbCreate(db).run()
      await Promise.allSettled(Array.from({ length: 8 }, () => r.db(db).tableCreate('messages').run()))
      if ((await tables(db)).length > 1) break
    }
    const duplicates = (await tables(db)).length
    expect(duplicates).toBeGreaterThan(1)
    const repaired = await Promise.all([start({ RETHINKDB_URL: url }), start({ RETHINKDB_URL: url })])
    expect((await tables(db)).filter((name) => name === 'messages')).toEqual(['messages'])
    expect((await tables(db)).filter((name) => name.includes('duplicate'))).toEqual([])
    expect(
      repaired.flatMap((instance) => instance.logs).some((line) => line.msg.includes(`exists ${duplicates} times`))
    ).toBe(true)
    await Promise.all(repaired.map((instance) => instance.stop()))

    // An earlier repair left a duplicate holding records beside an empty table: it takes the name.
    const moved = freshDatabase()
    await r.dbCreate(moved.db).run()
    await r.db(moved.db).tableCreate('messages').run()
    await r.db(moved.db).tableCreate('messages_duplicate_0123456789ab').run()
    await r.db(moved.db).table('messages_duplicate_0123456789ab').insert({ id: 'kept', text: 'kept' }).run()
    const taker = await start({ RETHINKDB_URL: moved.url })
    expect((await tables(moved.db)).filter((name) => name.startsWith('messages'))).toEqual(['messages'])
    expect(await r.db(moved.db).table('messages').get('kept').run()).toEqual({ id: 'kept', text: 'kept' })
    await taker.stop()

    // Both hold records: nothing is dropped, and the start fails naming the duplicate.
    const both = freshDatabase()
    await r.dbCreate(both.db).run()
    for (const name of ['messages', 'messages_duplicate_0123456789ab']) {
      await r.db(both.db).tableCreate(name).run()
      await r
        .db(both.db)
        .table(name)
        .insert({ text: `in ${name}` })
        .run()
    }
    await expect(start({ RETHINKDB_URL: both.url, RETHINKDB_TIMEOUT: '10' })).rejects.toThrow('exited before')
    expect((await tables(both.db)).filter((name) => name.startsWith('messages')).sort()).toEqual([
      'messages',
      'messages_duplicate_0123456789ab'
    ])
  }, 180_000)

  it('one instance follows a table for its direct writes; killed, the other takes the lease over and publishes the next one', async () => {
    const { db, url } = freshDatabase()
    const two = await Promise.all([1, 2].map(() => start({ RETHINKDB_URL: url })))
    const tokens = await Promise.all(two.map((instance, index) => signUp(instance.url, `direct${index}@example.com`)))
    const clients = await Promise.all(two.map((instance, index) => listen(instance.url, tokens[index]!)))
    listeners.push(...clients)
    const table = server!.r.db(db).table('messages')
    await table.insert({ id: 'admin-1', text: 'from the admin UI' }).run()
    await expectExactlyOnce(clients, ['created admin-1'], { settleMs: 0 })

    // One instance follows the table (it holds the lease) and logs what was written directly; killed, the
    // other takes the lease over once it expired (5 s) and publishes the next direct write.
    const follows = (instance: Instance) =>
      instance.logs.some(
        (line) => line.msg.startsWith('RethinkDB: this instance now publishes') && line.table === 'messages'
      )
    expect(two.filter(follows)).toHaveLength(1)
    const follower = two.find(follows)!
    const survivor = two.find((instance) => instance !== follower)!
    follower.kill()
    await until('the other instance follows the table', () => follows(survivor), 10_000)
    await table.insert({ id: 'admin-3', text: 'after the follower died' }).run()
    await expectExactlyOnce([clients[two.indexOf(survivor)]!], ['created admin-1', 'created admin-3'])
    for (const client of clients) client.socket.disconnect()
  }, 60_000)
})
