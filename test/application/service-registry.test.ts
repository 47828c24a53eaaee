import { describe, expect, it } from '@jest/globals'
import type { Publisher } from '../../src/application/channel.js'
import type { CustomMethod, HookContext } from '../../src/application/hook-context.js'
import type { ServiceOptions } from '../../src/application/service-entry.js'
import { decorateHandle, type HandleCore } from '../../src/application/service-handle.js'
import { ServiceRegistry } from '../../src/application/service-registry.js'

/** A service with every standard method, a custom one and a plain member. */
function fullService() {
  const ok = async () => 'ok'
  return { find: ok, get: ok, create: ok, update: ok, patch: ok, remove: ok, shout: ok, label: 'full' }
}

/** What a handle asked of the app's core, in order. */
function recorder() {
  const calls: unknown[][] = []
  const core: HandleCore = {
    run: async (entry, { path, method, id, data, params }) => {
      calls.push(['run', entry.path, path, method, id, data, params])
      return { result: `ran ${method}` } as HookContext
    },
    pipeline: {
      addServiceHooks: (entry, map) => {
        calls.push(['hooks', entry.path, map])
      }
    },
    serviceEvents: {
      emitCustom: (entry, event, data, context) => {
        calls.push(['emit', entry.path, event, data, context])
      },
      publishOn: (entry, eventOrPublisher, publisher) => {
        calls.push(['publish', entry.path, eventOrPublisher, publisher])
      }
    }
  }
  return { calls, core }
}

function register(
  registry: ServiceRegistry,
  path: string,
  service: object = fullService(),
  options: ServiceOptions = {}
) {
  return registry.register(path, service, options)
}

/** A service registered on its own registry, its handle served by `core`. */
function handled(core: HandleCore, options: ServiceOptions = {}, path = 'things') {
  const entry = new ServiceRegistry().register(path, fullService(), options)
  decorateHandle(entry, core)
  return entry
}

describe('ServiceRegistry.register', () => {
  it('normalises the path and keeps the entry under it', () => {
    const registry = new ServiceRegistry()
    const entry = register(registry, '/users/:userId/posts/')
    expect(entry.path).toBe('users/:userId/posts')
    expect(entry.route).toEqual(['users', ':userId', 'posts'])
    expect(registry.get('users/:userId/posts/')).toBe(entry)
    expect(registry.paths).toEqual(['users/:userId/posts'])
    expect(register(registry, 'messages').route).toBeUndefined()
  })

  it('refuses a second service on the same path, however it is written', () => {
    const registry = new ServiceRegistry()
    register(registry, 'messages')
    expect(() => register(registry, '/messages/')).toThrow("A service is already registered at 'messages'")
  })

  it('exposes the standard methods the service has by default, custom ones only when listed', () => {
    const registry = new ServiceRegistry()
    expect(register(registry, 'full').methods).toEqual(['find', 'get', 'create', 'update', 'patch', 'remove'])
    expect(register(registry, 'partial', { get: async () => 1, shout: async () => 1 }).methods).toEqual(['get'])
    expect(register(registry, 'listed', fullService(), { methods: ['find', 'shout'] }).methods).toEqual([
      'find',
      'shout'
    ])
  })

  it.each(['setup', 'on', 'emit', 'hooks', 'publish'])('refuses the reserved name %s as a method', (name) => {
    const service = { ...fullService(), [name]: async () => undefined }
    expect(() => register(new ServiceRegistry(), 'things', service, { methods: ['find', name] })).toThrow(
      `'${name}' is reserved and cannot be a service method`
    )
  })

  it('refuses a listed method the service does not implement (or that is no function)', () => {
    expect(() => register(new ServiceRegistry(), 'things', fullService(), { methods: ['find', 'whisper'] })).toThrow(
      "Method 'whisper' is listed for 'things' but the service does not implement it"
    )
    expect(() => register(new ServiceRegistry(), 'things', fullService(), { methods: ['label'] })).toThrow(
      "Method 'label' is listed"
    )
  })

  it.each([':__id', ':__feathersId'])('refuses the reserved placeholder %s in a path', (placeholder) => {
    expect(() => register(new ServiceRegistry(), `things/${placeholder}/parts`)).toThrow('Reserved route placeholder')
  })

  it('does not keep a refused service', () => {
    const registry = new ServiceRegistry()
    expect(() => register(registry, 'things', fullService(), { methods: ['whisper'] })).toThrow()
    expect(registry.get('things')).toBeUndefined()
    expect(registry.paths).toEqual([])
  })

  it("knows the standard events, the options' events and the service's own `events`", () => {
    const service = { ...fullService(), events: ['typing'] }
    expect([...register(new ServiceRegistry(), 'chat', service, { events: ['shouted'] }).events]).toEqual([
      'created',
      'updated',
      'patched',
      'removed',
      'shouted',
      'typing'
    ])
  })

  it('marks a service that can `watch` its store as live', () => {
    const registry = new ServiceRegistry()
    expect(register(registry, 'plain').live).toBe(false)
    expect(register(registry, 'watched', { ...fullService(), watch: () => () => undefined }).live).toBe(true)
  })
})

describe('the handle of an entry (service-handle.ts)', () => {
  it('leaves the handle to the app: a registered entry is the bare prototype child of its service', () => {
    const entry = register(new ServiceRegistry(), 'things')
    expect(Object.getPrototypeOf(entry.handle)).toBe(entry.service)
    expect(Object.keys(entry.handle)).toEqual([])
  })

  it('runs each method through the app with its arguments read by meaning; params default to {}', async () => {
    const { calls, core } = recorder()
    const handle = handled(core, { methods: ['find', 'get', 'patch', 'shout'] }).handle
    await expect(handle.find({ query: { a: 1 } })).resolves.toBe('ran find')
    await handle.get(7)
    await handle.patch(7, { a: 2 }, { provider: 'rest' })
    await (handle as unknown as { shout: CustomMethod }).shout({ loud: true })
    expect(calls).toEqual([
      ['run', 'things', 'things', 'find', undefined, undefined, { query: { a: 1 } }],
      ['run', 'things', 'things', 'get', 7, undefined, {}],
      ['run', 'things', 'things', 'patch', 7, { a: 2 }, { provider: 'rest' }],
      ['run', 'things', 'things', 'shout', undefined, { loud: true }, {}]
    ])
  })

  it('has hook-running versions of the standard methods the service has, even those not exposed', async () => {
    const { calls, core } = recorder()
    const entry = handled(core, { methods: ['find'] })
    await entry.handle.remove(1)
    expect(calls).toEqual([['run', 'things', 'things', 'remove', 1, undefined, {}]])
    expect((entry.handle as unknown as { shout: unknown }).shout).toBe((entry.service as { shout: unknown }).shout)
  })

  it("keeps the service's own members reachable, and its identity members", () => {
    const entry = handled(recorder().core, { methods: ['find', 'shout'] }, '/things/')
    const handle = entry.handle as unknown as { label: string; path: string; methods: string[] }
    expect(handle.label).toBe('full')
    expect(Object.getPrototypeOf(handle)).toBe(entry.service)
    expect([handle.path, handle.methods]).toEqual(['things', ['find', 'shout']])
  })

  it('hands hooks, emit and publish to the app and chains them; they work taken off the handle', () => {
    const { calls, core } = recorder()
    const entry = handled(core)
    const { hooks, emit, publish } = entry.handle
    const map = { before: { all: [() => undefined] } }
    const publisher: Publisher = () => undefined
    const context = { method: 'create' } as HookContext
    expect(hooks(map)).toBe(entry.handle)
    expect(emit('typing', { who: 'a' }, context)).toBe(true)
    expect(publish('typing', publisher)).toBe(entry.handle)
    expect(calls).toEqual([
      ['hooks', 'things', map],
      ['emit', 'things', 'typing', { who: 'a' }, context],
      ['publish', 'things', 'typing', publisher]
    ])
  })

  it('on, once and off manage the local listeners of the entry', () => {
    const entry = handled(recorder().core)
    const { on, once, off } = entry.handle
    const heard: string[] = []
    const listener = (data: unknown) => {
      heard.push(`on ${String(data)}`)
    }
    expect(on('created', listener)).toBe(entry.handle)
    once('created', (data) => {
      heard.push(`once ${String(data)}`)
    })
    entry.emitter.emit('created', 1)
    expect(off('created', listener)).toBe(entry.handle)
    entry.emitter.emit('created', 2)
    expect(heard).toEqual(['on 1', 'once 1'])
  })
})

describe('ServiceRegistry.resolve', () => {
  function routes() {
    const registry = new ServiceRegistry()
    const entries = {
      messages: register(registry, 'messages'),
      nested: register(registry, 'api/v1/messages'),
      posts: register(registry, 'users/:userId/posts'),
      comments: register(registry, 'users/:userId/posts/:postId/comments')
    }
    return { registry, ...entries }
  }

  it('matches a path exactly, ignoring leading, trailing and doubled slashes', () => {
    const { registry, messages, nested } = routes()
    expect(registry.resolve('messages', false)).toEqual({ entry: messages, route: {} })
    expect(registry.resolve('/api//v1/messages/', false)).toEqual({ entry: nested, route: {} })
  })

  it('takes one trailing segment as the id only with allowId', () => {
    const { registry, messages, nested } = routes()
    expect(registry.resolve('/messages/42', true)).toEqual({ entry: messages, route: {}, id: '42' })
    expect(registry.resolve('api/v1/messages/a%20b', true)).toEqual({ entry: nested, route: {}, id: 'a%20b' })
    expect(registry.resolve('/messages/42', false)).toBeUndefined()
    expect(registry.resolve('/messages/42/43', true)).toBeUndefined()
  })

  it('fills `route` from :placeholders, with a trailing id only with allowId', () => {
    const { registry, posts, comments } = routes()
    expect(registry.resolve('/users/7/posts', false)).toEqual({ entry: posts, route: { userId: '7' }, id: undefined })
    expect(registry.resolve('/users/7/posts/3', true)).toEqual({ entry: posts, route: { userId: '7' }, id: '3' })
    expect(registry.resolve('/users/7/posts/3', false)).toBeUndefined()
    expect(registry.resolve('users/7/posts/3/comments/9', true)).toEqual({
      entry: comments,
      route: { userId: '7', postId: '3' },
      id: '9'
    })
  })

  it('does not match a routed path whose fixed segments differ, or with segments missing', () => {
    const { registry } = routes()
    expect(registry.resolve('users/7/drafts', false)).toBeUndefined()
    expect(registry.resolve('users/7', true)).toBeUndefined()
    expect(registry.resolve('users/7/posts/3/comments', true)?.entry.path).toBe('users/:userId/posts/:postId/comments')
  })

  it('prefers a plain service to a routed one, and tries routed ones in registration order', () => {
    const registry = new ServiceRegistry()
    const byId = register(registry, 'users/:id/posts')
    register(registry, 'users/:name/posts')
    const mine = register(registry, 'users/me/posts')
    expect(registry.resolve('users/me/posts', false)?.entry).toBe(mine)
    expect(registry.resolve('users/bob/posts', false)).toEqual({ entry: byId, route: { id: 'bob' }, id: undefined })
  })

  it('answers undefined for an unknown path', () => {
    const { registry } = routes()
    expect(registry.resolve('nothing', true)).toBeUndefined()
    expect(registry.resolve('', true)).toBeUndefined()
  })
})
