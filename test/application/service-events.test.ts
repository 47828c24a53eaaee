import { describe, expect, it } from '@jest/globals'
import { CombinedChannel, type Channel, type Delivery, type Publisher } from '../../src/application/channel.js'
import type { HookApp, HookContext } from '../../src/application/hook-context.js'
import type { ServiceEntry, ServiceOptions } from '../../src/application/service-entry.js'
import { Extensions } from '../../src/application/extensions.js'
import { ServiceEvents } from '../../src/application/service-events.js'
import { decorateHandle } from '../../src/application/service-handle.js'
import { ServiceRegistry } from '../../src/application/service-registry.js'
import type { RecordedEvent } from '../../src/domain/realtime/event-history.js'
import type { Connection } from '../../src/domain/service/service.js'
import { InMemoryEventHistory } from '../../src/infrastructure/store-commons/history/index.js'
import { FakeClock } from '../support/fake-clock.js'

const connection = (name: string): Connection => ({ provider: 'socketio', name })
const plainService = () => ({
  async find() {
    return []
  }
})

/** Gives an entry's handle its members, with `events` behind emit and publish (calls and hooks are not used here). */
function withHandle(entry: ServiceEntry, events: ServiceEvents): ServiceEntry {
  decorateHandle(entry, {
    run: () => Promise.reject(new Error('no calls in these tests')),
    pipeline: { addServiceHooks: () => undefined },
    serviceEvents: events
  })
  return entry
}

/** ServiceEvents with services registered beside it, and every delivery recorded. */
function setup() {
  const events = new ServiceEvents()
  const registry = new ServiceRegistry()
  const register = (path: string, service: object = plainService(), options: ServiceOptions = {}) =>
    withHandle(registry.register(path, service, options), events)
  const deliveries: Delivery[] = []
  events.onDelivery((delivery) => deliveries.push(delivery))
  /** Deliveries as `event: data → connection names`. */
  const summary = () =>
    deliveries.map(
      ({ path, event, data, connections }) =>
        `${path} ${event}: ${JSON.stringify(data)} → ${connections.map((member) => member.name).join(',')}`
    )
  return { events, register, deliveries, summary }
}

/** A channel of its own holding these connections. */
function channelOf(events: ServiceEvents, name: string, ...connections: Connection[]): Channel {
  return events.channel([name]).join(...connections)
}

describe('channels', () => {
  it('creates a named channel on first use and gives the same one after', () => {
    const { events } = setup()
    const first = events.channel(['room'])
    expect(events.channel(['room'])).toBe(first)
    expect(events.channelNames).toEqual(['room'])
  })

  it('gives several names as one CombinedChannel whose joins reach each named channel', () => {
    const { events } = setup()
    const both = events.channel(['a', 'b'])
    expect(both).toBeInstanceOf(CombinedChannel)
    both.join(connection('x'))
    expect([events.channel(['a']).length, events.channel(['b']).length]).toEqual([1, 1])
    expect(events.channelNames).toEqual(['a', 'b'])
  })

  it('leaveAll takes a connection out of every named channel', () => {
    const { events } = setup()
    const [x, y] = [connection('x'), connection('y')]
    channelOf(events, 'a', x, y)
    channelOf(events, 'b', x)
    events.leaveAll(x)
    expect([...events.channel(['a']).connections]).toEqual([y])
    expect(events.channel(['b']).length).toBe(0)
  })
})

describe('publishing an event', () => {
  it('tells local listeners every event with its context, whether or not it is published', () => {
    const events = new ServiceEvents()
    const entry = new ServiceRegistry().register('things', plainService(), {})
    const heard: unknown[] = []
    entry.emitter.on('created', (data, context) => heard.push([data, context]))
    entry.emitter.on('unknown', (data) => heard.push(data))
    const context = { method: 'create' } as HookContext
    events.emit(entry, 'created', { id: 1 }, context)
    events.emit(entry, 'unknown', 'x')
    expect(heard).toEqual([[{ id: 1 }, context], 'x'])
  })

  it('asks no publisher while no transport listens, and stops delivering once the listener unsubscribes', () => {
    const events = new ServiceEvents()
    const entry = new ServiceRegistry().register('things', plainService(), {})
    let asked = 0
    const all = events.channel(['all']).join(connection('x'))
    events.publish(() => {
      asked++
      return all
    })
    events.emit(entry, 'created', {})
    expect(asked).toBe(0)
    const deliveries: Delivery[] = []
    const stop = events.onDelivery((delivery) => deliveries.push(delivery))
    events.emit(entry, 'created', {})
    stop()
    events.emit(entry, 'created', {})
    expect([asked, deliveries.length]).toEqual([1, 1])
  })

  it('delivers to every listener the path, the event, the data and the connections', () => {
    const { events, register, deliveries } = setup()
    const other: Delivery[] = []
    events.onDelivery((delivery) => other.push(delivery))
    const entry = register('/users/:userId/posts')
    const x = connection('x')
    events.publish(() => channelOf(events, 'all', x))
    const context = { method: 'create' } as HookContext
    events.emit(entry, 'created', { id: 1 }, context)
    expect(deliveries).toEqual([{ path: 'users/:userId/posts', event: 'created', data: { id: 1 }, connections: [x] }])
    expect(other).toEqual(deliveries)
  })

  it("picks the publisher: the service's for the event, then the service's for all, then the app's for the event, then the app's for all", () => {
    const { events, register, deliveries } = setup()
    /** A publisher whose channel holds one connection named like the publisher. */
    const to = (name: string): Publisher => {
      const channel = channelOf(events, name, connection(name))
      return () => channel
    }
    const full = register('full')
    const half = register('half')
    const bare = register('bare')
    full.handle.publish('created', to('full-created'))
    full.handle.publish(to('full-all'))
    half.handle.publish(to('half-all'))
    events.publish('created', to('app-created'))
    events.publish(to('app-all'))
    const used = (entry: typeof full, event: string) => {
      deliveries.length = 0
      events.emit(entry, event, {})
      return deliveries.flatMap((delivery) => delivery.connections.map((member) => member.name))
    }
    expect(used(full, 'created')).toEqual(['full-created'])
    expect(used(full, 'patched')).toEqual(['full-all'])
    expect(used(half, 'created')).toEqual(['half-all'])
    expect(used(bare, 'created')).toEqual(['app-created'])
    expect(used(bare, 'removed')).toEqual(['app-all'])
  })

  it('publishes only the events the service knows: the standard four and its custom ones', () => {
    const { events, register, summary } = setup()
    const entry = register('chat', plainService(), { events: ['typing'] })
    const all = channelOf(events, 'all', connection('x'))
    events.publish(() => all)
    events.emit(entry, 'typing', 'a')
    events.emit(entry, 'whispered', 'b')
    events.emit(entry, 'removed', 'c')
    expect(summary()).toEqual(['chat typing: "a" → x', 'chat removed: "c" → x'])
  })

  it('delivers nothing when the publisher picks no channel', () => {
    const { events, register, deliveries } = setup()
    const entry = register('things')
    for (const chosen of [null, undefined, []]) {
      entry.handle.publish('created', () => chosen as Channel[] | null | undefined)
      events.emit(entry, 'created', {})
    }
    entry.handle.publish('created', () => events.channel(['empty']))
    events.emit(entry, 'created', {})
    expect(deliveries).toEqual([])
  })

  it('sends each connection an event once, however many chosen channels it is in', () => {
    const { events, register, summary } = setup()
    const [x, y, z] = [connection('x'), connection('y'), connection('z')]
    const entry = register('things')
    events.publish(() => [channelOf(events, 'a', x, y), channelOf(events, 'b', y, z), channelOf(events, 'c', x)])
    events.emit(entry, 'created', { id: 1 })
    expect(summary()).toEqual(['things created: {"id":1} → x,y,z'])
  })

  it('delivers one chosen channel as its members were when the event was published, with the payload it sends', () => {
    const { events, register, deliveries, summary } = setup()
    const [x, y, z] = [connection('x'), connection('y'), connection('z')]
    const entry = register('things')
    const room = channelOf(events, 'room', x, y)
    entry.handle.publish('created', () => room)
    entry.handle.publish('patched', () => room.send({ id: 1, text: '…' }))
    events.emit(entry, 'created', { id: 1, text: 'secret' })
    events.emit(entry, 'patched', { id: 1, text: 'secret' })
    room.join(z)
    room.leave(x)
    expect(summary()).toEqual([
      'things created: {"id":1,"text":"secret"} → x,y',
      'things patched: {"id":1,"text":"…"} → x,y'
    ])
    expect(deliveries[0]!.connections).not.toBe(deliveries[1]!.connections)
  })

  it('groups connections by payload: `channel.send(data)` makes its own delivery, the first channel of a connection wins', () => {
    const { events, register, summary } = setup()
    const [x, y, z, w] = [connection('x'), connection('y'), connection('z'), connection('w')]
    const entry = register('things')
    const redacted = { id: 1, text: '…' }
    events.publish(() => [
      channelOf(events, 'public', x),
      channelOf(events, 'guests', y, z).send(redacted),
      channelOf(events, 'others', z, w).send(redacted),
      channelOf(events, 'owner', y, w)
    ])
    events.emit(entry, 'created', { id: 1, text: 'secret' })
    expect(summary()).toEqual([
      'things created: {"id":1,"text":"secret"} → x',
      'things created: {"id":1,"text":"…"} → y,z,w'
    ])
  })
})

describe('events of finished calls (emitResult)', () => {
  const contextFor = (event: string | null, result: unknown, dispatch?: unknown) =>
    ({ event, result, dispatch }) as HookContext

  it('emits one event per record, the dispatched copy when hooks made one', () => {
    const { events, register } = setup()
    const entry = register('things')
    const heard: unknown[] = []
    entry.emitter.on('created', (data) => heard.push(data))
    events.emitResult(
      entry,
      contextFor(
        'created',
        [
          { id: 1, pin: 1 },
          { id: 2, pin: 2 }
        ],
        [{ id: 1 }, { id: 2 }]
      )
    )
    events.emitResult(entry, contextFor('created', { id: 3 }))
    expect(heard).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }])
  })

  it('emits nothing when a hook set the event to null, or the call answered nothing', () => {
    const { events, register } = setup()
    const entry = register('things')
    const heard: unknown[] = []
    const emit = entry.emitter.emit.bind(entry.emitter)
    entry.emitter.emit = (event: string | symbol, ...args: unknown[]) => {
      heard.push(event)
      return emit(event, ...args)
    }
    events.emitResult(entry, contextFor(null, { id: 1 }))
    events.emitResult(entry, contextFor('removed', null))
    events.emitResult(entry, contextFor('removed', undefined))
    expect(heard).toEqual([])
  })

  it('leaves the events of a live service to its store', () => {
    const { events, register } = setup()
    const entry = register('live', { ...plainService(), watch: () => () => undefined })
    const heard: unknown[] = []
    entry.emitter.on('created', (data) => heard.push(data))
    events.emitResult(entry, contextFor('created', { id: 1 }))
    expect(heard).toEqual([])
  })
})

describe('live services', () => {
  /** A service whose store reports its own changes through `watch`. */
  function liveService() {
    const listeners: ((change: { event: string; record: unknown }) => void)[] = []
    const published: unknown[] = []
    let watching = false
    const service = {
      ...plainService(),
      watch(listener: (change: { event: string; record: unknown }) => void) {
        listeners.push(listener)
        return () => listeners.splice(listeners.indexOf(listener), 1)
      },
      async whenWatching() {
        await new Promise((resolve) => setTimeout(resolve, 5))
        watching = true
      },
      async publish(event: string, data: unknown) {
        published.push([event, data])
      }
    }
    const change = (event: string, record: unknown) => {
      for (const listener of [...listeners]) listener({ event, record })
    }
    return { service, change, published, listeners, isWatching: () => watching }
  }

  it('follow turns store changes into service events without the protected fields, once the stream is live', async () => {
    const { events, register, summary } = setup()
    const live = liveService()
    const entry = register('users', live.service)
    const all = channelOf(events, 'all', connection('x'))
    events.publish(() => all)
    let hidden = new Set(['password'])
    await events.follow(entry, () => hidden)
    expect(live.isWatching()).toBe(true)
    live.change('created', { id: 1, email: 'a@x.io', password: 'hash' })
    hidden = new Set(['password', 'email'])
    live.change('patched', [{ id: 1, email: 'a@x.io', password: 'hash' }])
    hidden = new Set()
    live.change('removed', { id: 1, password: 'hash' })
    expect(summary()).toEqual([
      'users created: {"id":1,"email":"a@x.io"} → x',
      'users patched: [{"id":1}] → x',
      'users removed: {"id":1,"password":"hash"} → x'
    ])
  })

  it('follows a store once however often asked, and stops with unwatch; a plain service is not followed', async () => {
    const { events, register } = setup()
    const live = liveService()
    const entry = register('users', live.service)
    await events.follow(entry, () => new Set())
    await events.follow(entry, () => new Set())
    expect(live.listeners).toHaveLength(1)
    entry.unwatch!()
    expect(live.listeners).toHaveLength(0)
    const plain = register('plain')
    await events.follow(plain, () => new Set())
    expect(plain.unwatch).toBeUndefined()
  })

  it('service.emit goes through the live store, which brings it back to every process', () => {
    const { register } = setup()
    const live = liveService()
    const entry = register('users', live.service)
    const heard: unknown[] = []
    entry.emitter.on('typing', (data) => heard.push(data))
    entry.handle.emit('typing', { who: 'a' })
    expect(live.published).toEqual([['typing', { who: 'a' }]])
    expect(heard).toEqual([])
  })

  it('service.emit is local for a plain service and for a live one that cannot publish', () => {
    const { register } = setup()
    const heard: unknown[] = []
    const plain = register('plain')
    const watchOnly = register('watch-only', { ...plainService(), watch: () => () => undefined })
    plain.emitter.on('typing', (data) => heard.push(['plain', data]))
    watchOnly.emitter.on('typing', (data) => heard.push(['watch-only', data]))
    plain.handle.emit('typing', 1)
    watchOnly.handle.emit('typing', 2)
    expect(heard).toEqual([
      ['plain', 1],
      ['watch-only', 2]
    ])
  })
})

describe('the event history', () => {
  /** ServiceEvents recording into a real in-memory history, with `things` registered and every delivery kept. */
  function withHistory() {
    const history = new InMemoryEventHistory(new FakeClock(), 60_000)
    const registry = new ServiceRegistry()
    const app: HookApp = { paths: ['things'], service: () => entry.handle as never, schemasOf: () => undefined }
    const extensions = new Extensions()
    extensions.add({ record: (event) => history.append(event) })
    const events = new ServiceEvents({ extensions, app, entry: (path) => registry.get(path) })
    const entry = withHandle(registry.register('things', plainService(), {}), events)
    const deliveries: Delivery[] = []
    events.onDelivery((delivery) => deliveries.push(delivery))
    return { history, app, events, entry, deliveries }
  }

  it('records each published event once, with what a publisher may read of its call, and gives its offset to each delivery', async () => {
    const { history, events, entry, deliveries } = withHistory()
    const [x, y] = [connection('x'), connection('y')]
    events.publish(() => [channelOf(events, 'plain', x), channelOf(events, 'other', y).send({ summary: true })])
    const start = history.head()
    const context = {
      path: 'things',
      method: 'create',
      event: 'created',
      id: undefined,
      data: { password: 'secret' },
      result: { id: 1, hash: 'h' },
      dispatch: { id: 1 },
      params: {
        provider: 'rest',
        user: { id: 7 },
        query: {},
        connection: x,
        headers: { authorization: 'Bearer t' },
        authentication: { accessToken: 't' }
      }
    } as unknown as HookContext
    events.emit(entry, 'created', { id: 1 }, context)
    events.emit(entry, 'created', { id: 2 })
    const recorded = await history.since(start)
    expect(recorded).toEqual([
      {
        path: 'things',
        event: 'created',
        data: { id: 1 },
        offset: expect.any(String),
        context: {
          path: 'things',
          method: 'create',
          event: 'created',
          result: { id: 1 },
          params: { provider: 'rest', user: { id: 7 }, query: {} }
        }
      },
      { path: 'things', event: 'created', data: { id: 2 }, offset: expect.any(String) }
    ])
    const offsets = (recorded as RecordedEvent[]).map((event) => event.offset)
    expect(deliveries.map((delivery) => delivery.offset)).toEqual([offsets[0], offsets[0], offsets[1], offsets[1]])
  })

  it('publishes recorded events again to one connection through the publishers and channels as they are now', async () => {
    const { history, app, events, entry } = withHistory()
    const [x, y] = [connection('x'), connection('y')]
    const seen: unknown[] = []
    const start = history.head()
    events.publish((data, context) => {
      seen.push(
        context && {
          app: (context as HookContext).app,
          service: (context as HookContext).service,
          method: (context as HookContext).method
        }
      )
      return (data as { id: number }).id === 2
        ? channelOf(events, 'private', y)
        : channelOf(events, 'room').send({ masked: true })
    })
    for (const id of [1, 2, 3])
      events.emit(
        entry,
        'created',
        { id },
        id === 1
          ? ({ path: 'things', method: 'create', event: 'created', params: {} } as unknown as HookContext)
          : undefined
      )
    events.emit(entry, 'not-an-event-of-things', { id: 4 })
    seen.length = 0
    // x joined the room after the events: the replay picks it as the channels are now.
    channelOf(events, 'room', x)
    const missed = await events.missedBy(x, (await history.since(start)) as RecordedEvent[])
    expect(missed.map(({ data, connections, event }) => ({ event, data, connections }))).toEqual([
      { event: 'created', data: { masked: true }, connections: [x] },
      { event: 'created', data: { masked: true }, connections: [x] }
    ])
    expect(seen[0]).toEqual({ app, service: entry.handle, method: 'create' })
    expect(seen.slice(1)).toEqual([undefined, undefined])
  })
})
