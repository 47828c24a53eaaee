import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import authClientModule from '@feathersjs/authentication-client'
import { feathers } from '@feathersjs/feathers'
import socketioClientModule from '@feathersjs/socketio-client'
import { io, type Socket } from 'socket.io-client'
import { builtInstances, call, PASSWORD, signUp, type Instance, type Instances } from '../support/app-instances.js'
import { call as emit, receivedUntil as until } from '../support/reference-server.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/*
 * socket.io connection state recovery across instances: two real instances of the built server on
 * one RethinkDB database, the official socket.io-client reaching one of them through a TCP proxy.
 * The proxy is cut while writes go on through both instances, then sent to the other instance (or
 * the first one is killed): the client resumes there with its id, its login and every event it
 * missed, once each and in the log's order, then live ones. A rolling restart stops each instance in
 * turn with SIGTERM while writes go on. Needs a RethinkDB server (RETHINKDB_URL or Docker); otherwise
 * the run prints the loud SKIPPED line.
 */

const socketioClient = socketioClientModule.default
const authClient = authClientModule.default
type FeathersSocket = Parameters<typeof socketioClient>[0]
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

let instances: Instances
let database = 0
const running: Instance[] = []
const sockets: Socket[] = []
const proxies: TcpProxy[] = []

beforeAll(async () => {
  if (server) instances = await builtInstances('recovery')
}, 60_000)

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.disconnect()
  for (const proxy of proxies.splice(0)) await proxy.close()
  await Promise.all(running.splice(0).map((instance) => instance.stop()))
})

afterAll(async () => {
  await instances?.cleanup()
  await server?.stop()
})

/** Two instances on a fresh database of this run (dropped with it); `another` starts one more on it. */
async function twoInstances(windowSeconds = 30): Promise<[Instance, Instance, () => Promise<Instance>]> {
  const url = `rethinkdb://${server!.host}:${server!.port}/${server!.db}_${++database}`
  const env = { RETHINKDB_URL: url, SOCKET_RECOVERY_WINDOW: String(windowSeconds) }
  const another = async () => {
    const instance = await instances.start(env)
    running.push(instance)
    return instance
  }
  return [await another(), await another(), another]
}

const portOf = (instance: Instance) => Number(new URL(instance.url).port)

interface Reader {
  socket: Socket
  texts: string[]
}

/** A logged-in official client through a proxy in front of `instance`, recording every `messages created` text. */
async function readerThrough(instance: Instance, email: string): Promise<{ reader: Reader; proxy: TcpProxy }> {
  const token = await signUp(instance.url, email)
  const proxy = await startTcpProxy('127.0.0.1', Number(new URL(instance.url).port))
  proxies.push(proxy)
  const socket = io(`http://127.0.0.1:${proxy.port}`, {
    transports: ['websocket'],
    forceNew: true,
    reconnectionDelay: 50,
    reconnectionDelayMax: 100
  })
  sockets.push(socket)
  const reader: Reader = { socket, texts: [] }
  socket.on('messages created', (message: { text: string }) => reader.texts.push(message.text))
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  const [error] = await emit(socket, 'create', 'authentication', { strategy: 'jwt', accessToken: token })
  expect(error).toBeNull()
  return { reader, proxy }
}

/** Writes one message through `instance` (awaited: the log's order is the order of these writes). */
async function write(instance: Instance, token: string, text: string): Promise<void> {
  const answer = await call(instance.url, token, 'POST', 'messages', { text })
  expect(answer.status).toBe(201)
}

/** The official Feathers client (with its authentication client) through a proxy, logged in with a password. */
async function feathersReaderThrough(instance: Instance, email: string): Promise<{ reader: Reader; proxy: TcpProxy }> {
  await signUp(instance.url, email)
  const proxy = await startTcpProxy('127.0.0.1', portOf(instance))
  proxies.push(proxy)
  const socket = io(`http://127.0.0.1:${proxy.port}`, {
    transports: ['websocket'],
    forceNew: true,
    reconnectionDelay: 50,
    reconnectionDelayMax: 100
  })
  sockets.push(socket)
  const client = feathers()
    .configure(socketioClient(socket as unknown as FeathersSocket))
    .configure(authClient({ storage: new authClientModule.MemoryStorage() }))
  await client.authenticate({ strategy: 'local', email, password: PASSWORD })
  const reader: Reader = { socket, texts: [] }
  client.service('messages').on('created', (message: { text: string }) => reader.texts.push(message.text))
  return { reader, proxy }
}

/** Writes through `instance` one at a time until `stop()`, which answers the texts acknowledged, in order. */
function keepWriting(instance: Instance, token: string, prefix: string): { stop(): Promise<string[]> } {
  const written: string[] = []
  let stopping = false
  const loop = (async () => {
    while (!stopping || written.length < 3) {
      const text = `${prefix} ${written.length + 1}`
      await write(instance, token, text)
      written.push(text)
    }
  })()
  return {
    stop: async () => {
      stopping = true
      await loop
      return written
    }
  }
}

/**
 * SIGTERM on `leaving` while `staying` takes the writes and the proxies send reconnects to it: every
 * reader comes back on `staying`, recovered, with its id. Answers the texts written meanwhile.
 */
async function stopUnderClients(
  leaving: Instance,
  staying: Instance,
  readers: { reader: Reader; proxy: TcpProxy }[],
  writer: string,
  prefix: string
): Promise<string[]> {
  const ids = readers.map(({ reader }) => reader.socket.id)
  for (const { proxy } of readers) proxy.retarget(portOf(staying))
  const back = readers.map(
    ({ reader }) => new Promise<void>((resolve) => reader.socket.once('connect', () => resolve()))
  )
  const writes = keepWriting(staying, writer, prefix)
  expect(await leaving.stop()).toBe(0)
  await Promise.all(back)
  const written = await writes.stop()
  // Its clients' sessions were saved as lost before its store closed (not cut off by the shutdown).
  expect(leaving.logs.filter((line) => line.level >= 40 && line.operation === 'save a connection session')).toEqual([])
  for (const [index, { reader }] of readers.entries()) {
    expect(reader.socket.recovered).toBe(true)
    expect(reader.socket.id).toBe(ids[index])
  }
  return written
}

/** Writes through both instances in turn for about 3 s; answers the texts in the order written. */
async function writeOnBoth(instances: Instance[], token: string, prefix: string): Promise<string[]> {
  const written: string[] = []
  const end = Date.now() + 3000
  while (Date.now() < end || written.length < 6) {
    const text = `${prefix} ${written.length + 1}`
    await write(instances[written.length % instances.length]!, token, text)
    written.push(text)
  }
  return written
}

withServer('socket connection state recovery on RethinkDB, across instances', () => {
  it('a client cut off from instance A resumes on instance B: same id, logged in, every missed event once in order, then live', async () => {
    const [a, b] = await twoInstances()
    const writer = await signUp(a.url, 'writer@example.com')
    const { reader, proxy } = await readerThrough(a, 'reader@example.com')
    const { socket } = reader
    await write(b, writer, 'before')
    await until(socket, () => reader.texts.includes('before'))
    const id = socket.id
    const gone = new Promise((resolve) => socket.once('disconnect', resolve))
    await proxy.cut()
    await gone
    const missed = await writeOnBoth([a, b], writer, 'missed')
    proxy.retarget(Number(new URL(b.url).port))
    const back = new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    await proxy.restore()
    await back
    expect(socket.recovered).toBe(true)
    expect(socket.id).toBe(id)
    await write(a, writer, 'live')
    await until(socket, () => reader.texts.includes('live'))
    expect(reader.texts).toEqual(['before', ...missed, 'live'])
    const [error] = await emit(socket, 'find', 'messages', { $limit: 1 })
    expect(error).toBeNull()
  }, 120_000)

  it('a write made directly in the database while a client was away reaches it when it resumes on another instance, in the log’s order', async () => {
    const [a, b] = await twoInstances()
    const db = `${server!.db}_${database}`
    const writer = await signUp(b.url, 'writer@example.com')
    const { reader, proxy } = await readerThrough(a, 'reader@example.com')
    const { reader: witness } = await readerThrough(b, 'witness@example.com')
    await write(b, writer, 'before')
    await until(reader.socket, () => reader.texts.includes('before'))
    const gone = new Promise((resolve) => reader.socket.once('disconnect', resolve))
    await proxy.cut()
    await gone
    await write(a, writer, 'missed 1')
    // Made by hand (an admin UI, a script): whichever instance follows the table logs it, ~1.5 s later.
    await server!.r.db(db).table('messages').insert({ id: 'by-hand', text: 'written directly' }).run()
    await until(witness.socket, () => witness.texts.includes('written directly'))
    await write(b, writer, 'missed 2')
    proxy.retarget(portOf(b))
    const back = new Promise<void>((resolve) => reader.socket.once('connect', () => resolve()))
    await proxy.restore()
    await back
    expect(reader.socket.recovered).toBe(true)
    await write(a, writer, 'live')
    await until(reader.socket, () => reader.texts.includes('live'))
    expect(reader.texts).toEqual(['before', 'missed 1', 'written directly', 'missed 2', 'live'])
    expect(witness.texts).toEqual(['before', 'missed 1', 'written directly', 'missed 2', 'live'])
  }, 120_000)

  it('clients of an instance that is killed resume on the other one', async () => {
    const [a, b] = await twoInstances()
    const writer = await signUp(b.url, 'writer@example.com')
    const readers = await Promise.all([1, 2, 3].map((n) => readerThrough(a, `reader${n}@example.com`)))
    await write(b, writer, 'before')
    for (const { reader } of readers) await until(reader.socket, () => reader.texts.includes('before'))
    const ids = readers.map(({ reader }) => reader.socket.id)
    for (const { proxy } of readers) proxy.retarget(Number(new URL(b.url).port))
    const gone = readers.map(({ reader }) => new Promise((resolve) => reader.socket.once('disconnect', resolve)))
    const back = readers.map(
      ({ reader }) => new Promise<void>((resolve) => reader.socket.once('connect', () => resolve()))
    )
    process.kill(a.pid, 'SIGKILL')
    await Promise.all(gone)
    // The clients stay away while writes go on (their reconnects are refused), then reach b.
    for (const { proxy } of readers) await proxy.cut()
    const missed = await writeOnBoth([b], writer, 'after kill')
    for (const { proxy } of readers) await proxy.restore()
    await Promise.all(back)
    await write(b, writer, 'live')
    for (const [index, { reader }] of readers.entries()) {
      expect(reader.socket.recovered).toBe(true)
      expect(reader.socket.id).toBe(ids[index])
      await until(reader.socket, () => reader.texts.includes('live'))
      expect(reader.texts).toEqual(['before', ...missed, 'live'])
    }
  }, 120_000)

  it("a client of a killed instance that stays away longer than the window is not resumed elsewhere: the window runs from its instance's last heartbeat", async () => {
    // A 2 s window: instances beat every 0.5 s and count as dead after 1.5 s of silence.
    const [a, b] = await twoInstances(2)
    const writer = await signUp(b.url, 'writer@example.com')
    const { reader, proxy } = await readerThrough(a, 'reader@example.com')
    await write(b, writer, 'before')
    await until(reader.socket, () => reader.texts.includes('before'))
    const id = reader.socket.id
    proxy.retarget(portOf(b))
    const gone = new Promise((resolve) => reader.socket.once('disconnect', resolve))
    process.kill(a.pid, 'SIGKILL')
    await gone
    await proxy.cut()
    const killedAt = Date.now()
    await write(b, writer, 'while away')
    // Away for longer than the window after a's last heartbeat (the events are still in the log: it keeps them 61 s).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, killedAt + 4000 - Date.now())))
    const back = new Promise<void>((resolve) => reader.socket.once('connect', () => resolve()))
    await proxy.restore()
    await back
    expect(reader.socket.recovered).toBe(false)
    expect(reader.socket.id).not.toBe(id)
    expect(reader.texts).toEqual(['before'])
  }, 120_000)

  it('a rolling restart — SIGTERM on each instance in turn, a new one started in between — while clients stay connected and writes go on: every client resumes, nothing lost or doubled', async () => {
    const [a, b, another] = await twoInstances()
    const writer = await signUp(b.url, 'writer@example.com')
    const readers = [
      ...(await Promise.all([1, 2].map((n) => readerThrough(a, `reader${n}@example.com`)))),
      await feathersReaderThrough(a, 'feathers@example.com')
    ]
    await write(b, writer, 'before')
    for (const { reader } of readers) await until(reader.socket, () => reader.texts.includes('before'))
    // a goes down while b takes the writes; its clients come back on b.
    const first = await stopUnderClients(a, b, readers, writer, 'a stopping')
    // A new instance replaces a. The clients hear of a write made after it started, so it can replay from there.
    const c = await another()
    await write(c, writer, 'c started')
    for (const { reader } of readers) await until(reader.socket, () => reader.texts.includes('c started'))
    // b goes down while c takes the writes; the clients come back on c.
    const second = await stopUnderClients(b, c, readers, writer, 'b stopping')
    await write(c, writer, 'live')
    for (const { reader } of readers) {
      await until(reader.socket, () => reader.texts.includes('live'))
      expect(reader.texts).toEqual(['before', ...first, 'c started', ...second, 'live'])
    }
  }, 180_000)
})
