import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import {
  builtInstances,
  call,
  expectExactlyOnce,
  listen,
  PASSWORD,
  signUp,
  until,
  type Instance,
  type Instances,
  type Listener
} from '../support/app-instances.js'
import { emitAck } from '../interfaces/socketio/support.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/*
 * Several real instances of the built server (`node dist/plumage.mjs`) on one RethinkDB database,
 * with authenticated socket.io clients on each: they start together, and every write made through
 * any of them — or directly in the database — reaches every client exactly once, under the method's
 * event name, also when an instance loses its database for a while (or, for direct writes, when the
 * instance that follows the table is killed). Needs a RethinkDB server
 * (RETHINKDB_URL or Docker); otherwise the run prints the loud SKIPPED line.
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

withServer('several instances on one RethinkDB database', () => {
  it('start together on an empty database: every instance comes up, one table per service, indexes included', async () => {
    const { db, url } = freshDatabase()
    const started = await Promise.all([1, 2, 3, 4, 5].map(() => start({ RETHINKDB_URL: url })))
    expect(started).toHaveLength(5)
    const r = server!.r
    const names = (await r
      .db('rethinkdb')
      .table('table_config')
      .filter({ db })('name')
      .coerceTo('array')
      .run()) as string[]
    for (const name of ['messages', 'users', 'plumage_events'])
      expect(names.filter((each) => each === name)).toEqual([name])
    expect(new Set(names).size).toBe(names.length)
    expect(await r.db(db).table('plumage_events').indexList().run()).toContain('ts')
    await Promise.all(started.map((instance) => instance.stop()))
  }, 120_000)

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

  it("publishes every write once on every instance, under the method's event name", async () => {
    const { url } = freshDatabase()
    const three = await Promise.all([1, 2, 3].map(() => start({ RETHINKDB_URL: url })))
    const tokens = await Promise.all(three.map((instance, index) => signUp(instance.url, `writer${index}@example.com`)))
    const clients = await Promise.all(
      three.flatMap((instance, index) => [listen(instance.url, tokens[index]!), listen(instance.url, tokens[index]!)])
    )
    listeners.push(...clients)

    const expected: string[] = []
    const ids: string[] = []
    // 60 creates spread over the instances, ten at a time.
    for (let batch = 0; batch < 6; batch++) {
      const created = await Promise.all(
        Array.from({ length: 10 }, (_, index) => {
          const at = (batch * 10 + index) % 3
          return call(three[at]!.url, tokens[at]!, 'POST', 'messages', { text: `message ${batch}-${index}` })
        })
      )
      for (const { status, body } of created) {
        expect(status).toBe(201)
        ids.push(String(body.id))
        expected.push(`created ${String(body.id)}`)
      }
    }
    // The author changes their messages through every instance: update, patch, remove.
    const author = (id: string) => ids.indexOf(id) % 3
    const through = (id: string, step: number) => three[(author(id) + step) % 3]!.url
    for (const [index, id] of ids.slice(0, 20).entries()) {
      const { status } = await call(through(id, index), tokens[author(id)]!, 'PUT', `messages/${id}`, {
        text: `replaced ${index}`
      })
      expect(status).toBe(200)
      expected.push(`updated ${id}`)
    }
    await Promise.all(
      ids.slice(20, 40).map(async (id, index) => {
        const { status } = await call(through(id, index + 1), tokens[author(id)]!, 'PATCH', `messages/${id}`, {
          text: `patched ${index}`
        })
        expect(status).toBe(200)
        expected.push(`patched ${id}`)
      })
    )
    await Promise.all(
      ids.slice(40, 60).map(async (id, index) => {
        const { status } = await call(through(id, index + 2), tokens[author(id)]!, 'DELETE', `messages/${id}`)
        expect(status).toBe(200)
        expected.push(`removed ${id}`)
      })
    )
    expect(expected).toHaveLength(120)
    await expectExactlyOnce(clients, expected)
    // The payload is the record as written, on every instance (the author is stamped by the server).
    const replaced = clients[5]!.received.find(({ event, data }) => event === 'updated' && data.id === ids[0])
    expect(replaced?.data).toMatchObject({ id: ids[0], text: 'replaced 0' })
    for (const client of clients) client.socket.disconnect()
  }, 120_000)

  it('publishes writes made directly in the database once on every instance', async () => {
    const { db, url } = freshDatabase()
    const two = await Promise.all([1, 2].map(() => start({ RETHINKDB_URL: url })))
    const tokens = await Promise.all(two.map((instance, index) => signUp(instance.url, `direct${index}@example.com`)))
    const clients = await Promise.all(two.map((instance, index) => listen(instance.url, tokens[index]!)))
    listeners.push(...clients)
    const table = server!.r.db(db).table('messages')
    // Each write once the previous one was published: the table feed squashes a record's changes made within
    // 50 ms into one (a create and a remove of one record within it publish nothing), which is not under test here.
    const expected = ['created admin-1', 'created admin-2']
    await table
      .insert([
        { id: 'admin-1', text: 'from the admin UI' },
        { id: 'admin-2', text: 'another' }
      ])
      .run()
    await expectExactlyOnce(clients, expected, { settleMs: 0 })
    await table.get('admin-1').update({ text: 'edited by hand' }).run()
    expected.push('patched admin-1')
    await expectExactlyOnce(clients, expected, { settleMs: 0 })
    await table.get('admin-2').delete().run()
    expected.push('removed admin-2')
    await expectExactlyOnce(clients, expected)

    // One instance follows the table (it holds the lease) and logs what was written directly; killed, the
    // other takes the lease over once it expired (5 s) and publishes the next direct write.
    const follows = (instance: Instance) =>
      instance.logs.some(
        (line) => line.msg.startsWith('RethinkDB: this instance now publishes') && line.table === 'messages'
      )
    expect(two.filter(follows)).toHaveLength(1)
    const follower = two.find(follows)!
    const survivor = two.find((instance) => instance !== follower)!
    process.kill(follower.pid, 'SIGKILL')
    await until('the other instance follows the table', () => follows(survivor), 10_000)
    await table.insert({ id: 'admin-3', text: 'after the follower died' }).run()
    await expectExactlyOnce([clients[two.indexOf(survivor)]!], [...expected, 'created admin-3'])
    for (const client of clients) client.socket.disconnect()
  }, 60_000)

  it('revokes a session on every instance within a second of a logout on one: REST calls and open sockets', async () => {
    const { url } = freshDatabase()
    const [a, b] = await Promise.all([start({ RETHINKDB_URL: url }), start({ RETHINKDB_URL: url })])
    const token = await signUp(a!.url, 'revoked@example.com')
    const otherToken = await signUp(a!.url, 'other@example.com')
    const [revoked, other] = await Promise.all([listen(b!.url, token), listen(b!.url, otherToken)])
    listeners.push(revoked, other)
    expect((await call(b!.url, token, 'GET', 'messages')).status).toBe(200)

    expect((await call(a!.url, token, 'DELETE', 'authentication')).status).toBe(200)
    const loggedOut = Date.now()
    await until(
      'the other instance refuses the token',
      async () => (await call(b!.url, token, 'GET', 'messages')).status === 401,
      3_000
    )
    expect(Date.now() - loggedOut).toBeLessThan(1_500)
    // The socket on b is logged out too: a message the other user posts reaches only the other user.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const { body } = await call(a!.url, otherToken, 'POST', 'messages', { text: 'after the logout' })
    await until('the other user receives it', () => other.counts.has(`created ${String(body.id)}`))
    // Logged in again, the socket gets the next message: one connection gets its events in order, so
    // the one before would have come first had it been sent.
    const [error] = await emitAck(revoked.socket, 'create', 'authentication', {
      strategy: 'local',
      email: 'revoked@example.com',
      password: PASSWORD
    })
    expect(error).toBeNull()
    const next = await call(a!.url, otherToken, 'POST', 'messages', { text: 'after logging in again' })
    await until('the socket logged in again receives it', () => revoked.counts.has(`created ${String(next.body.id)}`))
    expect(revoked.counts.has(`created ${String(body.id)}`)).toBe(false)
  }, 60_000)

  it('gives an instance cut off from the database every event it missed, once, and reports 503 meanwhile', async () => {
    const { url } = freshDatabase()
    const proxy = await startTcpProxy(server!.host, server!.port)
    proxies.push(proxy)
    const db = new URL(url).pathname.slice(1)
    const direct = await start({ RETHINKDB_URL: url })
    const cutOff = await start({ RETHINKDB_URL: `rethinkdb://127.0.0.1:${proxy.port}/${db}` })
    const token = await signUp(direct.url, 'cut@example.com')
    const clients = await Promise.all([listen(direct.url, token), listen(cutOff.url, token)])
    listeners.push(...clients)
    await expect(fetch(`${cutOff.url}/health`).then((response) => response.status)).resolves.toBe(200)

    await proxy.cut()
    await until('the cut-off instance reports 503', async () => (await fetch(`${cutOff.url}/health`)).status === 503)
    const health = (await (await fetch(`${cutOff.url}/health`)).json()) as { status: string; problems: string[] }
    expect(health.status).toBe('degraded')
    expect(health.problems.length).toBeGreaterThan(0)
    expect((await call(cutOff.url, token, 'GET', 'messages')).status).toBe(503)

    const expected: string[] = []
    for (let index = 0; index < 30; index++) {
      const { status, body } = await call(direct.url, token, 'POST', 'messages', { text: `while cut off ${index}` })
      expect(status).toBe(201)
      expected.push(`created ${String(body.id)}`)
    }
    await proxy.restore()
    await until('the instance is ready again', async () => (await fetch(`${cutOff.url}/health`)).status === 200)
    for (let index = 0; index < 10; index++) {
      const { status, body } = await call(cutOff.url, token, 'POST', 'messages', { text: `after ${index}` })
      expect(status).toBe(201)
      expected.push(`created ${String(body.id)}`)
    }
    await expectExactlyOnce(clients, expected)
    for (const client of clients) client.socket.disconnect()
  }, 120_000)
})
