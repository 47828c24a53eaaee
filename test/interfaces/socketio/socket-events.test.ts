import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import { collect, connect, disconnectAll, emitAck, nextEvent, startSocketServer, type TestServer } from './support.js'
import { gravatar } from '../../support/gravatar.js'
import { createSocketTestApp } from './test-app.js'
import { ENGINES } from '../http/http-test-server.js'

/** The socket.io transport on the server of every HTTP engine. */
describe.each(ENGINES)('socket events on %s', (engine) => {
  const { app } = createSocketTestApp()
  let server: TestServer
  const sockets: Socket[] = []
  const credentials = { strategy: 'local', email: 'a@x.io', password: 'secret-pw' }

  async function open(login = false): Promise<Socket> {
    const socket = await connect(server.url)
    sockets.push(socket)
    if (login) expect((await emitAck(socket, 'authenticate', credentials))[0]).toBeNull()
    return socket
  }

  /** Events are written before any later ack on the same socket, so after this round trip nothing is in flight. */
  async function settled(socket: Socket): Promise<void> {
    await emitAck(socket, 'get', 'custom', 0, {})
  }

  beforeAll(async () => {
    await app.service('users').create({ email: 'a@x.io', password: 'secret-pw' })
    server = await startSocketServer(app, {}, engine)
  })
  afterEach(() => disconnectAll(app, sockets))
  afterAll(() => server.close())

  describe('socket events and channels', () => {
    it('delivers events from socket calls and from internal (e.g. REST) calls to authenticated sockets only', async () => {
      const [caller, watcher, anonymous] = [await open(true), await open(true), await open()]
      const toAnonymous = collect(anonymous, 'messages created')
      const received = nextEvent(watcher, 'messages created')
      const [, created] = await emitAck(caller, 'create', 'messages', { text: 'hello' }, {})
      expect(await received).toEqual(created)
      const fromInside = nextEvent(watcher, 'messages created')
      await app.service('messages').create({ text: 'from rest' }, { provider: 'rest' })
      expect(await fromInside).toMatchObject({ text: 'from rest' })
      await settled(anonymous)
      expect(toAnonymous).toEqual([])
    })

    it('sends the event before the ack of the call that caused it on the same socket', async () => {
      const socket = await open(true)
      const order: string[] = []
      socket.once('messages created', () => order.push('event'))
      await emitAck(socket, 'create', 'messages', { text: 'order' }, {})
      order.push('ack')
      expect(order).toEqual(['event', 'ack'])
    })

    it('sends one event per record for array creates and multi patch/remove', async () => {
      const [caller, watcher] = [await open(true), await open(true)]
      const created = collect(watcher, 'multi created')
      const patched = collect(watcher, 'multi patched')
      const removed = collect(watcher, 'multi removed')
      await emitAck(
        caller,
        'create',
        'multi',
        [1, 2, 3, 4, 5].map((n) => ({ n })),
        {}
      )
      await emitAck(caller, 'patch', 'multi', null, { seen: true }, {})
      await emitAck(caller, 'remove', 'multi', null, { n: { $gt: 3 } })
      await settled(watcher)
      expect(created.map((record) => (record as { n: number }).n)).toEqual([1, 2, 3, 4, 5])
      expect(patched).toHaveLength(5)
      expect(removed).toEqual([
        { n: 4, id: 3, seen: true },
        { n: 5, id: 4, seen: true }
      ])
    })

    it('delivers custom events declared in the service options', async () => {
      const [caller, watcher] = [await open(true), await open(true)]
      const boom = nextEvent(watcher, 'custom boom')
      await emitAck(caller, 'shout', 'custom', { text: 'hey' }, {})
      expect(await boom).toEqual({ loud: 'hey' })
    })

    it('never sends a password in users events', async () => {
      const [caller, watcher] = [await open(true), await open(true)]
      const created = nextEvent(watcher, 'users created')
      const patched = nextEvent(watcher, 'users patched')
      const [, user] = (await emitAck(caller, 'create', 'users', { email: 'b@x.io', password: 'hunter222' }, {})) as [
        null,
        { id: number }
      ]
      await emitAck(caller, 'patch', 'users', user.id, { password: 'hunter333' }, {})
      expect(await created).toEqual({ email: 'b@x.io', id: user.id, avatar: gravatar('b@x.io') })
      expect(await patched).toEqual({ email: 'b@x.io', id: user.id, avatar: gravatar('b@x.io') })
    })

    it('stops delivering after logout and after disconnect', async () => {
      const [caller, watcher] = [await open(true), await open(true)]
      const seen = collect(watcher, 'messages created')
      await emitAck(watcher, 'logout')
      await emitAck(caller, 'create', 'messages', { text: 'private' }, {})
      await settled(watcher)
      expect(seen).toEqual([])
      const gone = new Promise((resolve) => app.once('disconnect', resolve))
      caller.disconnect()
      await gone
      expect(app.channel('authenticated').length).toBe(0)
    })

    it('delivers a burst of events published in one turn completely and in order, before later acks', async () => {
      const [caller, watcher] = [await open(true), await open(true)]
      const received = collect(watcher, 'custom boom')
      const ownEvents = collect(caller, 'custom boom')
      // Events after the first of a turn are coalesced into one write per socket; none may be lost or reordered.
      for (let n = 0; n < 200; n++) app.service('custom').emit('boom', { n })
      const [, created] = await emitAck(caller, 'create', 'messages', { text: 'after the burst' }, {})
      await settled(watcher)
      expect(received).toEqual(Array.from({ length: 200 }, (_, n) => ({ n })))
      expect(ownEvents).toHaveLength(200)
      expect(created).toMatchObject({ text: 'after the burst' })
    })

    it('serialises each payload once per event, however many sockets receive it', async () => {
      const watchers = await Promise.all([1, 2, 3].map(() => open(true)))
      let serialised = 0
      const payload = {
        toJSON() {
          serialised++
          return { text: 'once' }
        }
      }
      const sendTo = async (count: number) => {
        const chosen = new Set([...app.channel('authenticated').connections].slice(0, count))
        app
          .service('custom')
          .publish('boom', () => app.channel('authenticated').filter((connection) => chosen.has(connection)))
        const received: unknown[] = []
        for (const socket of watchers) socket.once('custom boom', (data: unknown) => received.push(data))
        serialised = 0
        app.service('custom').emit('boom', payload)
        for (const socket of watchers) await settled(socket)
        for (const socket of watchers) socket.off('custom boom')
        expect(received).toEqual(Array.from({ length: count }, () => ({ text: 'once' })))
        return serialised
      }
      const forOne = await sendTo(1)
      const forThree = await sendTo(3)
      expect(forOne).toBeGreaterThan(0)
      expect(forThree).toBe(forOne)
    })

    it('delivers an event with binary data (several socket.io packets, no single frame) to every socket', async () => {
      const watchers = await Promise.all([1, 2].map(() => open(true)))
      app.service('custom').publish('boom', () => app.channel('authenticated'))
      const received = watchers.map((socket) => nextEvent(socket, 'custom boom'))
      app.service('custom').emit('boom', { n: 1, bytes: Buffer.from([1, 2, 3]) })
      for (const data of (await Promise.all(received)) as { n: number; bytes: Uint8Array }[]) {
        expect(data.n).toBe(1)
        expect([...Buffer.from(data.bytes)]).toEqual([1, 2, 3])
      }
    })
  })
})
