import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import { io, type Socket } from 'socket.io-client'
import { authentication } from '../../src/interfaces/client/authentication/authentication-client.js'
import { createClient, type ClientApp } from '../../src/interfaces/client/client-app.js'
import { rest } from '../../src/interfaces/client/rest/rest-client.js'
import { idempotentWrites } from '../../src/interfaces/client/retries/idempotent-writes.js'
import { socketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import type { AuthServer } from '../support/auth-server.js'
import { signup, startReferenceServer } from '../support/reference-server.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/*
 * plumage's client with idempotentWrites, against the reference app behind a TCP proxy that the test cuts: writes
 * whose answers are lost (the server committed them, then the connection dropped) are sent again with their keys
 * and applied once; writes made while the connection is down wait and go out in order when it is back.
 */
interface Message {
  id: number
  text: string
}

let server: AuthServer
let proxy: TcpProxy
/** How long the server holds a message's answer after writing it (so a cut falls between commit and reply). */
let holdMs = 0
/** Create calls the server ran (repeats included). */
let calls = 0
const sockets: Socket[] = []
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

beforeAll(async () => {
  server = await startReferenceServer()
  server.app.service('messages').hooks({
    before: { create: [() => void calls++] },
    after: { create: [() => (holdMs > 0 ? sleep(holdMs) : undefined)] }
  })
  proxy = await startTcpProxy('127.0.0.1', Number(new URL(server.url).port))
  await signup(server.url, 'retry@x.io')
})
afterEach(async () => {
  holdMs = 0
  for (const socket of sockets.splice(0)) socket.disconnect()
  await proxy.restore()
})
afterAll(async () => {
  await proxy.close()
  await server.close()
})

const proxyUrl = () => `http://127.0.0.1:${proxy.port}`

/** Every message with one of `texts`, in the order they were written (memory ids count up). */
async function written(texts: string[]): Promise<string[]> {
  const found = (await server.app
    .service('messages')
    .find({ query: { text: { $in: texts }, $limit: 1000 } })) as unknown as Message[] | { data: Message[] }
  const list = Array.isArray(found) ? found : found.data
  return list.sort((a, b) => a.id - b.id).map((message) => message.text)
}

async function socketClient(): Promise<{ client: ClientApp; socket: Socket }> {
  const socket = io(proxyUrl(), {
    transports: ['websocket'],
    forceNew: true,
    reconnectionDelay: 50,
    reconnectionDelayMax: 100
  })
  sockets.push(socket)
  const client = createClient()
    .configure(socketio(socket, { timeout: 3000 }))
    .configure(idempotentWrites({ delay: 50 }))
    .configure(authentication())
  await client.authenticate({ strategy: 'local', email: 'retry@x.io', password: 'secret-pw' })
  return { client, socket }
}

describe('idempotentWrites over socket.io', () => {
  it('applies once each of 20 writes whose answers were lost when the connection dropped after the commit', async () => {
    const { client } = await socketClient()
    const texts = Array.from({ length: 20 }, (_, n) => `dropped ${n}`)
    holdMs = 300
    calls = 0
    const sent = texts.map((text) => client.service('messages').create({ text }))
    // The writes are committed and their answers held: drop every connection now, and let it come back.
    await sleep(150)
    await proxy.cut()
    holdMs = 0
    await sleep(200)
    await proxy.restore()
    const answers = (await Promise.all(sent)) as unknown as Message[]
    expect(answers.map((answer) => answer.text)).toEqual(texts)
    expect((await written(texts)).sort()).toEqual([...texts].sort())
  }, 20_000)

  it('queues writes made while offline and sends them in order once the connection is back, each once', async () => {
    const { client, socket } = await socketClient()
    await proxy.cut()
    for (let tries = 0; tries < 100 && socket.connected; tries++) await sleep(10)
    expect(socket.connected).toBe(false)
    const texts = Array.from({ length: 8 }, (_, n) => `offline ${n}`)
    const sent = texts.map((text) => client.service('messages').create({ text }))
    await sleep(300)
    expect(await written(texts)).toEqual([])
    await proxy.restore()
    await Promise.all(sent)
    expect(await written(texts)).toEqual(texts)
  }, 20_000)
})

describe('idempotentWrites over REST', () => {
  it('sends a write again with its key after the connection broke before the answer, and applies it once', async () => {
    const client = createClient()
      .configure(rest(proxyUrl()).fetch(fetch))
      .configure(idempotentWrites({ delay: 100 }))
      .configure(authentication())
    await client.authenticate({ strategy: 'local', email: 'retry@x.io', password: 'secret-pw' })
    const texts = Array.from({ length: 10 }, (_, n) => `rest ${n}`)
    holdMs = 300
    calls = 0
    const sent = texts.map((text) => client.service('messages').create({ text }))
    await sleep(150)
    await proxy.cut()
    holdMs = 0
    await sleep(150)
    await proxy.restore()
    const answers = (await Promise.all(sent)) as unknown as Message[]
    expect(answers.map((answer) => answer.text)).toEqual(texts)
    expect((await written(texts)).sort()).toEqual([...texts].sort())
    expect(calls).toBeGreaterThanOrEqual(2 * texts.length)
  }, 20_000)
})
