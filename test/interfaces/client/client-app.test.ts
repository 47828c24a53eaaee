import { describe, expect, it } from '@jest/globals'
import { BadRequest } from '../../../src/domain/errors/errors.js'
import { createClient } from '../../../src/interfaces/client/client-app.js'
import type { ServiceCall } from '../../../src/domain/service/service.js'
import type { Transport } from '../../../src/interfaces/client/transport.js'
import { fillRoute } from '../../../src/interfaces/client/transport.js'

/** A transport that records calls and answers from a function. */
function fakeTransport(answer: (call: ServiceCall) => unknown = () => ({ ok: true })) {
  const calls: ServiceCall[] = []
  const transport: Transport = {
    name: 'fake',
    async call(call) {
      calls.push(call)
      return answer(call)
    }
  }
  return { transport, calls }
}

describe('client core', () => {
  it('caches one service object per normalised path', () => {
    const client = createClient()
    expect(client.service('/messages/')).toBe(client.service('messages'))
  })

  it('hands calls to the configured transport with the server signatures', async () => {
    const { transport, calls } = fakeTransport()
    const client = createClient().configure((app) => {
      app.transport = transport
    })
    await client.service('messages').patch(1, { a: 1 }, { query: { q: 'x' } })
    expect(calls).toEqual([{ path: 'messages', method: 'patch', id: 1, data: { a: 1 }, params: { query: { q: 'x' } } }])
  })

  it('rejects with a clear error when no transport is configured', async () => {
    await expect(createClient().service('messages').find()).rejects.toThrow(/No transport is configured/)
  })

  it('checks ids without a request', async () => {
    const { transport, calls } = fakeTransport()
    const client = createClient().configure((app) => {
      app.transport = transport
    })
    for (const method of ['get', 'update', 'patch', 'remove'] as const) {
      const service = client.service('messages') as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
      await expect(service[method]!('', {})).rejects.toThrow(new BadRequest(`id for .${method} is required`))
    }
    await expect(client.service('messages').get(null as never)).rejects.toThrow('id for .get is required')
    expect(calls).toEqual([])
  })

  it('runs app hooks around every call in registration order; a hook may answer without the transport', async () => {
    const { transport, calls } = fakeTransport()
    const order: string[] = []
    const client = createClient().configure((app) => {
      app.transport = transport
    })
    client.hooks([
      async (context, next) => {
        order.push('outer')
        context.params = { ...context.params, headers: { Authorization: 'Bearer t' } }
        await next()
      },
      async (context, next) => {
        order.push('inner')
        if (context.method === 'get') context.result = { cached: true }
        await next()
      }
    ])
    await expect(client.service('messages').get(1)).resolves.toEqual({ cached: true })
    await client.service('messages').find()
    expect(order).toEqual(['outer', 'inner', 'outer', 'inner'])
    expect(calls).toHaveLength(1)
    expect(calls[0]!.params.headers).toEqual({ Authorization: 'Bearer t' })
  })

  it('emits local events per record when the transport is not real-time', async () => {
    const { transport } = fakeTransport((call) => call.data)
    const client = createClient().configure((app) => {
      app.transport = transport
    })
    const seen: unknown[] = []
    client.service('messages').once('created', (data) => seen.push(data))
    await client.service('messages').create([{ n: 1 }, { n: 2 }])
    await client.service('messages').create({ n: 3 })
    expect(seen).toEqual([{ n: 1 }])
  })

  it('routes listeners through a real-time transport and emits nothing locally', async () => {
    const wire = new Map<string, (data: unknown) => void>()
    const transport: Transport = {
      name: 'live',
      async call(call) {
        return call.data
      },
      subscribe(path, event, emit) {
        wire.set(`${path} ${event}`, emit)
        return () => wire.delete(`${path} ${event}`)
      }
    }
    const client = createClient()
    const seen: unknown[] = []
    const listener = (data: unknown) => seen.push(data)
    client.service('messages').on('created', listener)
    client.transport = transport
    expect([...wire.keys()]).toEqual(['messages created'])
    await client.service('messages').create({ own: true })
    wire.get('messages created')!({ from: 'server' })
    expect(seen).toEqual([{ from: 'server' }])
    client.service('messages').off('created', listener)
    expect(wire.size).toBe(0)
  })

  it('has app-level events and settings for plugins', () => {
    const client = createClient().set('storageKey', 'feathers-jwt')
    const seen: unknown[] = []
    client.on('login', (result) => seen.push(result))
    client.emit('login', { accessToken: 't' })
    expect(seen).toEqual([{ accessToken: 't' }])
    expect(client.get('storageKey')).toBe('feathers-jwt')
  })

  it('fills route placeholders', () => {
    expect(fillRoute('users/:userId/posts', { userId: 'a b' }, encodeURIComponent)).toBe('users/a%20b/posts')
    expect(() => fillRoute('users/:userId/posts', {})).toThrow('params.route.userId is required')
  })
})
