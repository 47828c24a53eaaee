import { describe, expect, it } from '@jest/globals'
import type { ServiceCall } from '../../../../src/domain/service/service.js'
import { writeOffsets, type Transport } from '../../../../src/interfaces/client/transport.js'
import {
  createClient,
  FenceTimeout,
  idempotentWrites,
  readYourWrites,
  WriteFence
} from '../../../../src/library/client.js'

/**
 * A real-time transport in memory: writes answer with an offset when asked, `watch` answers an empty list, and
 * `fence` answers when the test says (`release`), so a test decides whether the views applied the offset before or
 * after the write's answer.
 */
class FakeTransport implements Transport {
  readonly name = 'socketio'
  readonly calls: ServiceCall[] = []
  readonly fences: { offset: string; answer(): void }[] = []
  fenceAtOnce = true
  private seq = 0

  async call(call: ServiceCall): Promise<unknown> {
    this.calls.push(call)
    if (call.params.query?.$offset === true) writeOffsets.set(call.params, `e.${++this.seq}`)
    return { id: this.seq, ...(call.data as object) }
  }

  request(event: string, ...args: unknown[]): Promise<unknown> {
    if (event === 'watch') return Promise.resolve({ id: 'w1', records: [] })
    if (event !== 'fence') return Promise.resolve({})
    return new Promise((resolve) => {
      const answer = () => resolve({ reached: true })
      if (this.fenceAtOnce) answer()
      else this.fences.push({ offset: args[0] as string, answer })
    })
  }

  /** The listeners of the transport's reconnections; `reconnect()` calls them. */
  readonly reconnections = new Set<() => void>()

  reconnected(listener: () => void): () => void {
    this.reconnections.add(listener)
    return () => this.reconnections.delete(listener)
  }

  reconnect(): void {
    for (const listener of this.reconnections) listener()
  }

  listen(): () => void {
    return () => undefined
  }

  subscribe(): () => void {
    return () => undefined
  }
}

function clientWith(transport = new FakeTransport()) {
  const client = createClient()
  client.transport = transport
  return { client, transport }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5))

describe('read your writes: the fence of the client', () => {
  it('asks nothing and waits for nothing when the service has no live query or subscription', async () => {
    const { client, transport } = clientWith()
    client.service('users').watch({})
    await client.service('messages').create({ text: 'a' })
    expect(transport.calls[0]!.params.query?.$offset).toBeUndefined()
    expect(transport.fences).toHaveLength(0)
  })

  it('resolves a write at once when its views answer the fence at once (offset applied before the reply)', async () => {
    const { client, transport } = clientWith()
    const watch = client.service('messages').watch({})
    await watch.ready
    const created = await client.service('messages').create({ text: 'a' })
    expect(created).toEqual({ id: 1, text: 'a' })
    expect(transport.calls[0]!.params.query).toEqual({ $offset: true })
  })

  it('resolves a write only once its views applied the offset (fence answered after the reply)', async () => {
    const { client, transport } = clientWith()
    transport.fenceAtOnce = false
    await client.service('messages').watch({}).ready
    let resolved = false
    const writing = client
      .service('messages')
      .create({ text: 'a' })
      .then(() => (resolved = true))
    await tick()
    expect(transport.fences.map((fence) => fence.offset)).toEqual(['e.1'])
    expect(resolved).toBe(false)
    transport.fences[0]!.answer()
    await writing
    expect(resolved).toBe(true)
  })

  it('counts a record-event listener as a view, and stops once it is removed', async () => {
    const { client, transport } = clientWith()
    const listener = () => undefined
    client.service('messages').on('created', listener)
    await client.service('messages').create({ text: 'a' })
    expect(transport.calls[0]!.params.query).toEqual({ $offset: true })
    client.service('messages').off('created', listener)
    await client.service('messages').create({ text: 'b' })
    expect(transport.calls[1]!.params.query?.$offset).toBeUndefined()
  })

  it('gives up after its wait with FenceTimeout, which carries the write result and offset', async () => {
    const { client, transport } = clientWith()
    transport.fenceAtOnce = false
    client.configure(readYourWrites({ timeout: 50 }))
    await client.service('messages').watch({}).ready
    const started = Date.now()
    const failed = await client
      .service('messages')
      .create({ text: 'late' })
      .catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(FenceTimeout)
    expect(failed).toMatchObject({ name: 'FenceTimeout', offset: 'e.1', result: { id: 1, text: 'late' }, timeout: 50 })
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('is off with readYourWrites({ enabled: false }), and shared between clients with readYourWrites({ fence })', async () => {
    const { client: off, transport: offTransport } = clientWith()
    off.configure(readYourWrites({ enabled: false }))
    await off.service('messages').watch({}).ready
    await off.service('messages').create({ text: 'a' })
    expect(offTransport.calls[0]!.params.query?.$offset).toBeUndefined()

    const fence = new WriteFence()
    const { client: watcher, transport: watching } = clientWith()
    const { client: writer } = clientWith()
    watcher.configure(readYourWrites({ fence }))
    writer.configure(readYourWrites({ fence }))
    watching.fenceAtOnce = false
    await watcher.service('messages').watch({}).ready
    const writing = writer.service('messages').create({ text: 'b' })
    await tick()
    // The writer's write waits for the watcher's socket, which has the view.
    expect(watching.fences).toHaveLength(1)
    watching.fences[0]!.answer()
    await writing
  })

  it('waits the same way for a keyed write of idempotentWrites (the key and the offset travel together)', async () => {
    const { client, transport } = clientWith()
    client.configure(idempotentWrites())
    transport.fenceAtOnce = false
    await client.service('messages').watch({}).ready
    const writing = client.service('messages').create({ text: 'keyed' })
    await tick()
    expect(transport.calls[0]!.params.query).toMatchObject({ $offset: true, $idempotencyKey: expect.any(String) })
    expect(transport.fences.map((fence) => fence.offset)).toEqual(['e.1'])
    transport.fences[0]!.answer()
    expect(await writing).toEqual({ id: 1, text: 'keyed' })
  })

  it('asks again when the connection comes back: a fence request cut off by a drop gets no answer', async () => {
    const { client, transport } = clientWith()
    transport.fenceAtOnce = false
    await client.service('messages').watch({}).ready
    let resolved = false
    const writing = client
      .service('messages')
      .create({ text: 'a' })
      .then(() => (resolved = true))
    await tick()
    // The first request was lost with its connection: it is never answered.
    expect(transport.fences).toHaveLength(1)
    transport.reconnect()
    await tick()
    expect(transport.fences).toHaveLength(2)
    expect(transport.fences[1]!.offset).toBe(transport.fences[0]!.offset)
    expect(resolved).toBe(false)
    transport.fences[1]!.answer()
    await writing
    expect(resolved).toBe(true)
    // Settled: a later reconnection asks nothing more.
    transport.reconnect()
    await tick()
    expect(transport.fences).toHaveLength(2)
    expect(transport.reconnections.size).toBe(0)
  })
})
