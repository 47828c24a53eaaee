import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import { io, type Socket } from 'socket.io-client'
import { builtInstances, call, signUp, type Instance, type Instances } from '../support/app-instances.js'
import { call as emit, receivedUntil as until } from '../support/reference-server.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/*
 * socket.io connection state recovery across instances: two real instances of the built server on
 * one RethinkDB database, the official socket.io-client reaching one of them through a TCP proxy.
 * The proxy is cut while writes go on through both instances, then sent to the other instance (or
 * the first one is killed): the client resumes there with its id, its login and every event it
 * missed, once each and in the log's order, then live ones. Needs a RethinkDB server (RETHINKDB_URL
 * or Docker); otherwise the run prints the loud SKIPPED line.
 */
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

/** Two instances on a fresh database of this run (dropped with it). */
async function twoInstances(): Promise<[Instance, Instance]> {
  const url = `rethinkdb://${server!.host}:${server!.port}/${server!.db}_${++database}`
  const env = { RETHINKDB_URL: url, SOCKET_RECOVERY_WINDOW: '30' }
  const first = await instances.start(env)
  const second = await instances.start(env)
  running.push(first, second)
  return [first, second]
}

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
})
