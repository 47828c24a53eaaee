import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import axios from 'axios'
import request$ from 'request'
import type { Socket } from 'socket.io-client'
import superagent from 'superagent'
import type { SuperagentLike } from '../../../src/interfaces/client/rest/http-libraries.js'
import { createClient, readYourWrites, rest, socketio, WriteFence } from '../../../src/library/client.js'
import type { AuthServer } from '../../support/auth-server.js'
import {
  call,
  connectSocket,
  request,
  signup,
  startReferenceServer,
  type Session
} from '../../support/reference-server.js'
import { jqueryInJsdom } from '../../support/jquery-in-jsdom.js'
import { slowLink } from '../../support/slow-link.js'

type Message = { id: number; text: string }

// Read your writes on one instance (memory): the wire (the offset of a write that asks for it) and the fence of
// plumage's client, with the watching socket on a slow link so that only the fence makes the write wait for it.
describe('read your writes (memory)', () => {
  let server: AuthServer
  let alice: Session
  const sockets: Socket[] = []
  const connect = async () => {
    const socket = await connectSocket(server.url, alice.token)
    sockets.push(socket)
    return socket
  }

  beforeAll(async () => {
    server = await startReferenceServer()
    alice = await signup(server.url, 'alice@example.com')
  })

  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    await server.close()
  })

  it('answers a write that asks with $offset with its event offset (a third ack argument, the Plumage-Offset header)', async () => {
    const socket = await connect()
    const events: unknown[][] = []
    socket.on('messages created', (...args: unknown[]) => events.push(args))
    const [error, created, offset] = await call(socket, 'create', 'messages', { text: 'one' }, { $offset: true })
    expect(error).toBeNull()
    expect(created).toMatchObject({ text: 'one' })
    // The offset is the one the event carried (it arrived before the ack on this socket).
    expect(typeof offset).toBe('string')
    expect(events.at(-1)?.[1]).toBe(offset)
    // Without $offset: two arguments, as Feathers clients expect; $offset never reaches the service's query.
    const plain = await call(socket, 'create', 'messages', { text: 'two' }, {})
    expect(plain).toHaveLength(2)
    const rest = await request(server.url, 'POST', '/messages?$offset=true', {
      body: { text: 'three' },
      token: alice.token
    })
    expect(rest.status).toBe(201)
    const head = await fetch(`${server.url}/messages?$offset=true`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${alice.token}` },
      body: JSON.stringify({ text: 'four' })
    })
    expect(head.headers.get('plumage-offset')).toMatch(/^.+\..+$/)
    const plainRest = await fetch(`${server.url}/messages`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${alice.token}` },
      body: JSON.stringify({ text: 'five' })
    })
    expect(plainRest.headers.get('plumage-offset')).toBeNull()
  })

  it("answers 'fence' once the connection has every event up to the offset", async () => {
    const socket = await connect()
    const [, , offset] = await call(socket, 'create', 'messages', { text: 'fenced' }, { $offset: true })
    expect(await call(socket, 'fence', offset)).toEqual([null, { reached: true }])
    expect((await call(socket, 'fence', 'another-epoch.1'))[1]).toEqual({ reached: false })
    expect((await call(socket, 'fence', 42))[0]).toMatchObject({ code: 400 })
  })

  it("resolves a write only once the client's live query on a slow socket shows it; without the fence it does not", async () => {
    const fence = new WriteFence()
    const watcher = createClient()
      .configure(socketio(slowLink(await connect(), 150)))
      .configure(readYourWrites({ fence }))
    const writer = createClient()
      .configure(socketio(await connect()))
      .configure(readYourWrites({ fence }))
    const watch = watcher.service('messages').watch({ query: { tag: 'ryw', $sort: { id: 1 } } })
    await watch.ready
    const first = (await writer.service('messages').create({ text: 'seen', tag: 'ryw' })) as Message
    expect((watch.list as Message[]).map((message) => message.id)).toEqual([first.id])

    fence.enabled = false
    const second = (await writer.service('messages').create({ text: 'not yet', tag: 'ryw' })) as Message
    expect((watch.list as Message[]).map((message) => message.id)).toEqual([first.id])
    fence.enabled = true
    const third = (await writer.service('messages').create({ text: 'seen too', tag: 'ryw' })) as Message
    expect((watch.list as Message[]).map((message) => message.id)).toEqual([first.id, second.id, third.id])
    await watch.unwatch()
  })

  it('waits for a subscription of record events the same way', async () => {
    const fence = new WriteFence()
    const listener = createClient()
      .configure(socketio(slowLink(await connect(), 150)))
      .configure(readYourWrites({ fence }))
    const writer = createClient()
      .configure(socketio(await connect()))
      .configure(readYourWrites({ fence }))
    const heard: number[] = []
    listener.service('messages').on('created', (message) => heard.push((message as Message).id))
    const created = (await writer.service('messages').create({ text: 'heard' })) as Message
    expect(heard).toContain(created.id)
  })

  it('waits the same way for a REST write over every HTTP library (the Plumage-Offset header)', async () => {
    const jquery = jqueryInJsdom(server.url)
    const headers = { Authorization: `Bearer ${alice.token}` }
    const libraries = {
      fetch: rest(server.url).fetch(fetch, { headers }),
      axios: rest(server.url).axios(axios, { headers }),
      superagent: rest(server.url).superagent(superagent as unknown as SuperagentLike, { headers }),
      jquery: rest(server.url).jquery(jquery.$, { headers }),
      request: rest(server.url).request(request$.defaults({ headers }))
    }
    try {
      for (const [library, transport] of Object.entries(libraries)) {
        const fence = new WriteFence()
        const watcher = createClient()
          .configure(socketio(slowLink(await connect(), 150)))
          .configure(readYourWrites({ fence }))
        const writer = createClient().configure(transport).configure(readYourWrites({ fence }))
        const watch = watcher.service('messages').watch({ query: { tag: `rest-${library}` } })
        await watch.ready
        const created = (await writer.service('messages').create({ text: library, tag: `rest-${library}` })) as Message
        expect([library, (watch.list as Message[]).map((message) => message.id)]).toEqual([library, [created.id]])
        await watch.unwatch()
      }
    } finally {
      await jquery.close()
    }
  })

  it('leaves writes as they were without connection recovery: no offset, $offset taken out, nothing waits', async () => {
    const plain = await startReferenceServer({ SOCKET_RECOVERY_WINDOW: '0' })
    try {
      const bob = await signup(plain.url, 'bob@example.com')
      const socket = await connectSocket(plain.url, bob.token)
      sockets.push(socket)
      const answer = await call(socket, 'create', 'messages', { text: 'x' }, { $offset: true })
      expect(answer).toHaveLength(2)
      const client = createClient().configure(socketio(socket))
      await client.service('messages').watch({ query: { tag: 'norec' } }).ready
      const created = (await client.service('messages').create({ text: 'a', tag: 'norec' })) as Message
      expect(await client.service('messages').patch(created.id, { text: 'b' })).toMatchObject({ text: 'b' })
      expect(await client.service('messages').remove(created.id)).toMatchObject({ id: created.id })
    } finally {
      await plain.close()
    }
  })
})
