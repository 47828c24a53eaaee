import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import pg from 'pg'
import { io, type Socket } from 'socket.io-client'
import {
  builtInstances,
  call,
  expectExactlyOnce,
  listen,
  signUp,
  type Instance,
  type Instances,
  type Listener
} from '../support/app-instances.js'
import { discoverPostgres } from '../support/postgres-server.js'
import { call as emit, receivedUntil as until } from '../support/reference-server.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/*
 * Several real instances of the built server (`node dist/plumage.mjs`) with STORE=postgres on one
 * database: they start together, every write made through any of them — or directly in SQL — reaches
 * every client exactly once under the method's event name, and a socket cut off from one instance
 * resumes on the other with every event it missed. Needs PostgreSQL (POSTGRES_URL, or the binaries
 * for a throw-away server); otherwise the run prints the loud SKIPPED line (never on CI).
 */
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip

let instances: Instances
const running: Instance[] = []
const listeners: Listener[] = []
const sockets: Socket[] = []
const proxies: TcpProxy[] = []

async function start(url: string, env: Record<string, string> = {}): Promise<Instance> {
  const instance = await instances.start({ STORE: 'postgres', POSTGRES_URL: url, ...env })
  running.push(instance)
  return instance
}

async function sql<R>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows as R[]
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  if (database) instances = await builtInstances('postgres-instances')
}, 60_000)

afterEach(async () => {
  for (const listener of listeners.splice(0)) listener.socket.disconnect()
  for (const socket of sockets.splice(0)) socket.disconnect()
  for (const proxy of proxies.splice(0)) await proxy.close()
  await Promise.all(running.splice(0).map((instance) => instance.stop()))
})

afterAll(async () => {
  await instances?.cleanup()
  await database?.stop()
})

withServer('several instances on one PostgreSQL database', () => {
  it('start together on an empty database: every instance comes up, each table made once', async () => {
    const url = await database!.fresh()
    const started = await Promise.all([1, 2, 3, 4].map(() => start(url)))
    expect(started).toHaveLength(4)
    const tables = await sql<{ tablename: string }>(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    const names = tables.map((row) => row.tablename)
    for (const name of ['messages', 'users', 'plumage_events'])
      expect(names.filter((each) => each === name)).toEqual([name])
    for (const instance of started) expect((await fetch(`${instance.url}/health`)).status).toBe(200)
  }, 120_000)

  it("publishes every write, through any instance or in SQL, once on every instance under the method's event name", async () => {
    const url = await database!.fresh()
    const three = await Promise.all([1, 2, 3].map(() => start(url)))
    const tokens = await Promise.all(three.map((instance, index) => signUp(instance.url, `writer${index}@example.com`)))
    const clients = await Promise.all(three.map((instance, index) => listen(instance.url, tokens[index]!)))
    listeners.push(...clients)
    const expected: string[] = []
    const ids: string[] = []
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        call(three[n % 3]!.url, tokens[n % 3]!, 'POST', 'messages', { text: `m${n}` })
      )
    )
    for (const { status, body } of created) {
      expect(status).toBe(201)
      ids.push(String(body.id))
      expected.push(`created ${String(body.id)}`)
    }
    // The author changes their messages through the other instances.
    for (const [index, id] of ids.slice(0, 10).entries()) {
      const author = index % 3
      expect(
        (await call(three[(author + 1) % 3]!.url, tokens[author]!, 'PUT', `messages/${id}`, { text: 'put' })).status
      ).toBe(200)
      expected.push(`updated ${id}`)
    }
    for (const [index, id] of ids.slice(10, 20).entries()) {
      const author = (index + 10) % 3
      expect(
        (await call(three[(author + 2) % 3]!.url, tokens[author]!, 'PATCH', `messages/${id}`, { text: 'p' })).status
      ).toBe(200)
      expected.push(`patched ${id}`)
    }
    for (const [index, id] of ids.slice(20, 30).entries()) {
      const author = (index + 20) % 3
      expect((await call(three[author]!.url, tokens[author]!, 'DELETE', `messages/${id}`)).status).toBe(200)
      expected.push(`removed ${id}`)
    }
    await sql(url, `INSERT INTO messages (key, doc) VALUES ('admin-1', '{"id": "admin-1", "text": "by hand"}')`)
    await sql(url, `UPDATE messages SET doc = doc || '{"text": "edited"}' WHERE key = 'admin-1'`)
    await sql(url, `DELETE FROM messages WHERE key = 'admin-1'`)
    expected.push('created admin-1', 'patched admin-1', 'removed admin-1')
    await expectExactlyOnce(clients, expected)
    const replaced = clients[2]!.received.find(({ event, data }) => event === 'updated' && data.id === ids[0])
    expect(replaced?.data).toMatchObject({ id: ids[0], text: 'put' })
  }, 120_000)

  it('a client cut off from instance A resumes on instance B: same id, every missed event once in order, then live', async () => {
    const url = await database!.fresh()
    const env = { SOCKET_RECOVERY_WINDOW: '30' }
    const a = await start(url, env)
    const b = await start(url, env)
    const writer = await signUp(a.url, 'writer@example.com')
    const token = await signUp(a.url, 'reader@example.com')
    const proxy = await startTcpProxy('127.0.0.1', Number(new URL(a.url).port))
    proxies.push(proxy)
    const socket = io(`http://127.0.0.1:${proxy.port}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnectionDelay: 50,
      reconnectionDelayMax: 100
    })
    sockets.push(socket)
    const texts: string[] = []
    socket.on('messages created', (message: { text: string }) => texts.push(message.text))
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    expect((await emit(socket, 'create', 'authentication', { strategy: 'jwt', accessToken: token }))[0]).toBeNull()
    const write = async (instance: Instance, text: string) =>
      expect((await call(instance.url, writer, 'POST', 'messages', { text })).status).toBe(201)
    await write(b, 'before')
    await until(socket, () => texts.includes('before'))
    const id = socket.id
    const gone = new Promise((resolve) => socket.once('disconnect', resolve))
    await proxy.cut()
    await gone
    const missed: string[] = []
    for (let n = 0; n < 8; n++) {
      missed.push(`missed ${n}`)
      await write(n % 2 ? a : b, `missed ${n}`)
    }
    proxy.retarget(Number(new URL(b.url).port))
    const back = new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    await proxy.restore()
    await back
    expect(socket.recovered).toBe(true)
    expect(socket.id).toBe(id)
    await write(a, 'live')
    await until(socket, () => texts.includes('live'))
    expect(texts).toEqual(['before', ...missed, 'live'])
  }, 120_000)
})
