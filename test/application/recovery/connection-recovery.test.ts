import { afterEach, describe, expect, it } from '@jest/globals'
import { AdapterService } from '../../../src/application/adapter-service.js'
import { App } from '../../../src/application/app.js'
import { connectionRecovery } from '../../../src/application/recovery/index.js'
import { AuthenticationService } from '../../../src/application/authentication/authentication-service.js'
import { hashPassword } from '../../../src/application/authentication/hooks/hash-password.js'
import { protect } from '../../../src/application/authentication/hooks/protect.js'
import { JwtStrategy } from '../../../src/application/authentication/jwt-strategy.js'
import { LocalStrategy } from '../../../src/application/authentication/local-strategy.js'
import type { Delivery } from '../../../src/application/channel.js'
import { Gateway } from '../../../src/application/transport/gateway.js'
import type { ConnectionSessions } from '../../../src/domain/realtime/connection-sessions.js'
import type { EventHistory } from '../../../src/domain/realtime/event-history.js'
import type { Connection } from '../../../src/domain/service/service.js'
import { JsonWebTokenService } from '../../../src/infrastructure/auth/json-web-token-service.js'
import { InMemoryConnectionSessions } from '../../../src/infrastructure/memory/in-memory-connection-sessions.js'
import { InMemoryEventHistory } from '../../../src/infrastructure/store-commons/history/index.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { FakeClock } from '../../support/fake-clock.js'
import { FakePasswordHasher } from '../../support/fake-password-hasher.js'

const WINDOW = 60_000
const gateways: Gateway[] = []
afterEach(() => {
  for (const gateway of gateways.splice(0)) gateway.shutdown()
})

/**
 * An app with recovery: users and login, `messages` published to logged-in connections, `notes`
 * published to their owner only (the publisher reads the call's context). Every delivery and
 * every offset handed to a connection is recorded by connection.
 */
async function recoveringApp(
  history?: (inner: EventHistory) => EventHistory,
  wrapSessions: (inner: ConnectionSessions) => ConnectionSessions = (inner) => inner
) {
  const clock = new FakeClock()
  const inner = new InMemoryEventHistory(clock, 10 * WINDOW)
  const sessions = wrapSessions(new InMemoryConnectionSessions(clock, WINDOW))
  const app = new App({
    extensions: [connectionRecovery({ history: history ? history(inner) : inner, sessions })]
  })
  app.use('users', new AdapterService(new InMemoryStore()))
  app.service('users').hooks({
    before: { create: [hashPassword('password', { strategy: 'local' })] },
    after: { all: [protect('password')] }
  })
  const tokens = new JsonWebTokenService({ secret: 'unit-test-secret-0123456789', expiresIn: '30s' }, clock)
  app.use(
    'authentication',
    new AuthenticationService({ tokens, clock }).register(
      new JwtStrategy(),
      new LocalStrategy(new FakePasswordHasher())
    )
  )
  app.use('messages', new AdapterService(new InMemoryStore()))
  app.use('notes', new AdapterService(new InMemoryStore()))
  app.on('connection', (connection: Connection) => app.channel('anonymous').join(connection))
  app.on('login', (_result: unknown, { connection }: { connection?: Connection } = {}) => {
    if (!connection) return
    app.channel('anonymous').leave(connection)
    app.channel('authenticated').join(connection)
  })
  app.on('logout', (_result: unknown, { connection }: { connection?: Connection } = {}) => {
    if (!connection) return
    app.channel('authenticated').leave(connection)
    app.channel('anonymous').join(connection)
  })
  app.service('messages').publish(() => app.channel('authenticated'))
  app.service('notes').publish('created', (data, context) => {
    const { params, app: contextApp } = context as { params: { user?: { id: number } }; app: App }
    return contextApp
      .channel('authenticated')
      .filter((connection) => connection.user?.id === params.user?.id)
      .send({ ...(data as object), for: params.user?.id })
  })
  await app.setup()
  for (const email of ['ann@example.com', 'bob@example.com'])
    await app.service('users').create({ email, password: 'secret' })
  const gateway = new Gateway(app, { clock })
  gateways.push(gateway)
  const received = new Map<Connection, string[]>()
  const offsets = new Map<Connection, string>()
  const record = (connection: Connection, entry: string) =>
    received.set(connection, [...(received.get(connection) ?? []), entry])
  gateway.onDelivery((delivery: Delivery) => {
    for (const connection of delivery.connections) {
      record(connection, `${delivery.path} ${delivery.event} ${JSON.stringify(delivery.data)}`)
      if (delivery.offset) offsets.set(connection, delivery.offset)
    }
  })
  gateway.onOffset((connection, offset) => offsets.set(connection, offset))

  /** A socket-like connection: handshake, session saved, opened, told the head (as the socket.io transport does). */
  async function connect(pid: string, email?: string): Promise<Connection> {
    const connection: Connection = { provider: 'socketio', headers: {} }
    await gateway.handshake(connection)
    await gateway.recovery.remember(connection, { id: pid, connectionId: `sid-${pid}` })
    offsets.set(connection, gateway.recovery.head())
    gateway.open(connection)
    if (email) await gateway.authenticate(connection, { strategy: 'local', email, password: 'secret' })
    return connection
  }
  const asUser = async (email: string) => {
    const login = (await app.service('authentication').create({ strategy: 'local', email, password: 'secret' })) as {
      user: { id: number }
    }
    return { provider: 'rest', user: login.user, authenticated: true }
  }
  return { app, clock, gateway, connect, received, offsets, asUser }
}

describe('ConnectionRecovery', () => {
  it('restores a lost connection: its login, its channels, what it missed in order (filtered as live), then live events', async () => {
    const { app, gateway, connect, received, offsets, asUser } = await recoveringApp()
    const ann = await connect('p-ann', 'ann@example.com')
    await app.service('messages').create({ text: 'before' })
    const offset = offsets.get(ann)!
    gateway.close(ann, 'lost')
    await app.service('messages').create({ text: 'missed 1' })
    await app.service('notes').create({ text: 'for ann' }, await asUser('ann@example.com'))
    await app.service('notes').create({ text: 'for bob' }, await asUser('bob@example.com'))
    await app.service('messages').create({ text: 'missed 2' })

    const restorable = await gateway.recovery.restorable('p-ann', offset, 'socketio')
    expect(restorable?.session).toMatchObject({ id: 'p-ann', connectionId: 'sid-p-ann' })
    const back: Connection = { provider: 'socketio', headers: {} }
    await gateway.recovery.restore(back, restorable!)
    await app.service('messages').create({ text: 'live' })

    expect(back.user).toMatchObject({ email: 'ann@example.com' })
    expect(received.get(ann)).toEqual(['messages created {"text":"before","id":0}'])
    expect(received.get(back)).toEqual([
      'messages created {"text":"missed 1","id":1}',
      'notes created {"text":"for ann","id":0,"for":0}',
      'messages created {"text":"missed 2","id":2}',
      'messages created {"text":"live","id":3}'
    ])
  })

  it('replays nothing twice after a second loss (the offset moved on with the recovery)', async () => {
    const { app, gateway, connect, received, offsets } = await recoveringApp()
    const first = await connect('p', 'ann@example.com')
    gateway.close(first, 'lost')
    await app.service('messages').create({ text: 'one' })
    const second: Connection = { provider: 'socketio', headers: {} }
    await gateway.recovery.restore(second, (await gateway.recovery.restorable('p', offsets.get(first)!, 'socketio'))!)
    gateway.close(second, 'lost')
    await app.service('messages').create({ text: 'two' })
    const third: Connection = { provider: 'socketio', headers: {} }
    await gateway.recovery.restore(third, (await gateway.recovery.restorable('p', offsets.get(second)!, 'socketio'))!)
    expect(received.get(second)).toEqual(['messages created {"text":"one","id":0}'])
    expect(received.get(third)).toEqual(['messages created {"text":"two","id":1}'])
  })

  it('does not replay events from before a login with that login', async () => {
    const { app, gateway, connect, received, offsets } = await recoveringApp()
    const anonymous = await connect('p')
    const offset = offsets.get(anonymous)!
    await app.service('messages').create({ text: 'while anonymous' })
    await gateway.authenticate(anonymous, { strategy: 'local', email: 'ann@example.com', password: 'secret' })
    await app.service('messages').create({ text: 'after login' })
    // The client lost the answer and the event: it comes back with the offset it had before the login.
    gateway.close(anonymous, 'lost')
    const back: Connection = { provider: 'socketio', headers: {} }
    await gateway.recovery.restore(back, (await gateway.recovery.restorable('p', offset, 'socketio'))!)
    expect(received.get(back)).toEqual(['messages created {"text":"after login","id":1}'])
  })

  it('hands live events published during the restore after the replay, none twice', async () => {
    let publishDuringRestore: (() => Promise<unknown>) | undefined
    const { app, gateway, connect, received, offsets } = await recoveringApp((inner) => ({
      append: (event) => inner.append(event),
      head: () => inner.head(),
      async since(offset) {
        const publish = publishDuringRestore
        publishDuringRestore = undefined
        // One event lands before the history is read (replayed, its live copy dropped), one after (held, then sent).
        await publish?.()
        const events = await inner.since(offset)
        await publish?.()
        return events
      }
    }))
    const ann = await connect('p', 'ann@example.com')
    gateway.close(ann, 'lost')
    await app.service('messages').create({ text: 'missed' })
    const restorable = await gateway.recovery.restorable('p', offsets.get(ann)!, 'socketio')
    let n = 0
    publishDuringRestore = () => app.service('messages').create({ text: `during ${++n}` })
    const back: Connection = { provider: 'socketio', headers: {} }
    await gateway.recovery.restore(back, restorable!)
    expect(received.get(back)).toEqual([
      'messages created {"text":"missed","id":0}',
      'messages created {"text":"during 1","id":1}',
      'messages created {"text":"during 2","id":2}'
    ])
  })

  it('rejects a restore when the history dropped events after the session was found restorable', async () => {
    let pruned = false
    const { app, gateway, connect, offsets } = await recoveringApp((inner) => ({
      append: (event) => inner.append(event),
      head: () => inner.head(),
      since: async (offset) => (pruned ? 'unknown' : inner.since(offset))
    }))
    const ann = await connect('p', 'ann@example.com')
    gateway.close(ann, 'lost')
    await app.service('messages').create({ text: 'missed' })
    const restorable = await gateway.recovery.restorable('p', offsets.get(ann)!, 'socketio')
    pruned = true
    await expect(gateway.recovery.restore({ provider: 'socketio', headers: {} }, restorable!)).rejects.toThrow(
      'The event history dropped events the restored connection missed'
    )
  })

  it('does not restore a session whose login expired, one closed on purpose, or from an offset the history does not know', async () => {
    const { clock, gateway, connect, offsets } = await recoveringApp()
    const expiring = await connect('expiring', 'ann@example.com')
    const closed = await connect('closed', 'bob@example.com')
    const anonymous = await connect('anonymous')
    gateway.close(expiring, 'lost')
    gateway.close(closed, 'closed')
    gateway.close(anonymous, 'lost')
    await new Promise((resolve) => setImmediate(resolve))
    expect(await gateway.recovery.restorable('closed', offsets.get(closed)!, 'socketio')).toBeUndefined()
    expect(await gateway.recovery.restorable('anonymous', 'elsewhere.1', 'socketio')).toBeUndefined()
    expect(await gateway.recovery.restorable('anonymous', offsets.get(anonymous)!, 'socketio')).toBeDefined()
    expect(await gateway.recovery.restorable('expiring', offsets.get(expiring)!, 'socketio')).toBeDefined()
    // Within the window, but past the 30-second token: the client must log in again.
    clock.advance(31_000)
    expect(await gateway.recovery.restorable('anonymous', offsets.get(anonymous)!, 'socketio')).toBeDefined()
    expect(await gateway.recovery.restorable('expiring', offsets.get(expiring)!, 'socketio')).toBeUndefined()
  })

  it('lets a lost session expire after the window', async () => {
    const { clock, gateway, connect, offsets } = await recoveringApp()
    const connection = await connect('p')
    gateway.close(connection, 'lost')
    await new Promise((resolve) => setImmediate(resolve))
    clock.advance(WINDOW + 1)
    expect(await gateway.recovery.restorable('p', offsets.get(connection)!, 'socketio')).toBeUndefined()
  })

  it('saves a logout: the session comes back anonymous', async () => {
    const { app, gateway, connect, received, offsets } = await recoveringApp()
    const ann = await connect('p', 'ann@example.com')
    await gateway.logout(ann)
    gateway.close(ann, 'lost')
    await app.service('messages').create({ text: 'for the logged-in only' })
    const back: Connection = { provider: 'socketio', headers: {} }
    await gateway.recovery.restore(back, (await gateway.recovery.restorable('p', offsets.get(ann)!, 'socketio'))!)
    expect(back.user).toBeUndefined()
    expect(received.get(back)).toBeUndefined()
  })

  it('counts the save of a lost session in flight: a shutdown (app.idle) waits for it before the store closes', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let holding = false
    const order: string[] = []
    const { app, gateway, connect } = await recoveringApp(undefined, (inner) => ({
      load: (id) => inner.load(id),
      remove: (id) => inner.remove(id),
      close: () => inner.close(),
      save: async (session) => {
        if (holding) await held
        await inner.save(session)
        if (session.disconnectedAt !== undefined) order.push('lost session saved')
      }
    }))
    const connection = await connect('p')
    holding = true
    gateway.close(connection, 'lost')
    const idle = app.idle(60_000).then(() => order.push('idle'))
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(order).toEqual([])
    release()
    await idle
    expect(order).toEqual(['lost session saved', 'idle'])
  })

  it('counts a failed save of a lost session out all the same', async () => {
    const { app, gateway, connect } = await recoveringApp(undefined, (inner) => ({
      load: (id) => inner.load(id),
      remove: (id) => inner.remove(id),
      close: () => inner.close(),
      save: (session) =>
        session.disconnectedAt === undefined ? inner.save(session) : Promise.reject(new Error('store closed'))
    }))
    gateway.close(await connect('p'), 'lost')
    const order: string[] = []
    const idle = app.idle(60_000).then(() => order.push('idle'))
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(order).toEqual(['idle'])
    await idle
  })
})
