import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { connect, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { createInterface } from 'node:readline'
import { AdapterService } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { listenNdjson } from '../../examples/add-a-transport.js'

/** A TCP client of the example transport: sends lines, collects every line it receives. */
async function client(port: number): Promise<{
  socket: Socket
  send(line: unknown): void
  next(test: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>
}> {
  const socket = connect(port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  const received: Record<string, unknown>[] = []
  const waiting: (() => void)[] = []
  createInterface({ input: socket }).on('line', (line) => {
    received.push(JSON.parse(line) as Record<string, unknown>)
    for (const wake of waiting.splice(0)) wake()
  })
  return {
    socket,
    send: (line) => socket.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`),
    async next(test) {
      for (;;) {
        const index = received.findIndex(test)
        if (index >= 0) return received.splice(index, 1)[0]!
        await new Promise<void>((resolve) => waiting.push(resolve))
      }
    }
  }
}

describe('"Add a transport": newline-delimited JSON over TCP through the gateway', () => {
  const app = new App()
  let server: Server
  let port: number

  beforeAll(async () => {
    app.use('messages', new AdapterService(new InMemoryStore()))
    app.on('connection', (connection) => app.channel('everybody').join(connection))
    app.publish(() => app.channel('everybody'))
    await app.setup()
    server = await listenNdjson(app)
    port = (server.address() as AddressInfo).port
  })
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  it('answers calls and publishes their events to every open connection', async () => {
    const alice = await client(port)
    const bob = await client(port)
    await new Promise((resolve) => setTimeout(resolve, 50))
    alice.send({ ref: 1, path: 'messages', method: 'create', data: { text: 'hello' } })
    expect(await alice.next((line) => line.ref === 1)).toEqual({ ref: 1, result: { id: 0, text: 'hello' } })
    expect(await bob.next((line) => line.event === 'created')).toEqual({
      path: 'messages',
      event: 'created',
      data: { id: 0, text: 'hello' }
    })
    bob.send({ ref: 2, path: 'messages', method: 'find', query: { text: 'hello' } })
    expect(await bob.next((line) => line.ref === 2)).toEqual({ ref: 2, result: [{ id: 0, text: 'hello' }] })
    alice.socket.destroy()
    bob.socket.destroy()
  })

  it('answers bad lines and unknown services with framework errors, and keeps serving', async () => {
    const carol = await client(port)
    carol.send('not json')
    expect(await carol.next(() => true)).toMatchObject({
      error: { name: 'BadRequest', code: 400, message: 'Each line must be a JSON object' }
    })
    carol.send({ ref: 3, path: 'nowhere', method: 'find' })
    expect(await carol.next((line) => line.ref === 3)).toMatchObject({ error: { name: 'BadRequest' } })
    carol.send({ ref: 4, path: 'messages', method: 'get', id: 999 })
    expect(await carol.next((line) => line.ref === 4)).toMatchObject({ error: { name: 'NotFound', code: 404 } })
    carol.send({ ref: 5, path: 'messages', method: 'setup' })
    expect(await carol.next((line) => line.ref === 5)).toMatchObject({ error: { name: 'MethodNotAllowed', code: 405 } })
    carol.socket.destroy()
  })

  it('takes a closed connection out of the channels', async () => {
    const dave = await client(port)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const before = app.channel('everybody').length
    dave.socket.destroy()
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(app.channel('everybody').length).toBe(before - 1)
  })
})
