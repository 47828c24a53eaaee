import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { io, type Socket } from 'socket.io-client'
import { createClient, socketio, type LiveChange } from '../../../src/library/client.js'
import type { AuthServer } from '../../support/auth-server.js'
import { connectSocket, signup, startReferenceServer, type Session } from '../../support/reference-server.js'
import { call, findRecords, RawWatch, until } from './live-client.js'

type Message = { id: number; text: string }

/** A client whose socket reconnects only when told (`socket.connect()`), logged in by its handshake. */
function clientOf(url: string, session: Session) {
  const socket: Socket = io(url, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    extraHeaders: { Authorization: `Bearer ${session.token}` }
  })
  return { socket, client: createClient().configure(socketio(socket)) }
}

/** Drops the socket's transport (as a network cut does), then connects again once `meanwhile` ran. */
async function cut(socket: Socket, meanwhile: () => Promise<void>): Promise<void> {
  const gone = new Promise<void>((resolve) => socket.once('disconnect', () => resolve()))
  socket.io.engine.close()
  await gone
  await meanwhile()
  const back = new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  socket.connect()
  await back
}

describe("plumage's client: service.watch", () => {
  const servers: AuthServer[] = []
  const sockets: Socket[] = []

  beforeAll(async () => {
    servers.push(await startReferenceServer())
    servers.push(await startReferenceServer({ SOCKET_RECOVERY_WINDOW: '0' }))
  })

  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    for (const server of servers) await server.close()
  })

  it('iterates the current list, emits changes with offsets, and resumes after a cut without a reset', async () => {
    const [server] = servers
    const alice = await signup(server!.url, 'alice@example.com')
    const writer = await connectSocket(server!.url, alice.token)
    sockets.push(writer)
    for (const text of ['one', 'two']) await call(writer, 'create', 'messages', { text, tag: 'c' })
    const { socket, client } = clientOf(server!.url, alice)
    sockets.push(socket)
    const query = { tag: 'c', $sort: { id: -1 }, $limit: 3 }
    const watch = client.service('messages').watch({ query })
    const lists: Message[][] = []
    const iterating = (async () => {
      for await (const list of watch) {
        lists.push(list as Message[])
        if (list.length === 3 && (list[0] as Message).text === 'five') break
      }
    })()
    const changes: LiveChange<unknown>[] = []
    const resets: unknown[] = []
    watch.on('change', (change: LiveChange<unknown>) => changes.push(change))
    watch.on('reset', (reset: unknown) => resets.push(reset))
    expect((await watch.ready).map((m) => (m as Message).text)).toEqual(['two', 'one'])
    await call(writer, 'create', 'messages', { text: 'three', tag: 'c' })
    expect(await until(() => watch.list.length === 3)).toBe(true)
    expect(changes.at(-1)).toMatchObject({ changes: [{ type: 'added', index: 0 }], offset: expect.any(String) })

    // Missed while cut: a creation, a patch and a removal; the list equals a fresh find again, with no reset.
    const offsetBefore = watch.offset
    await cut(socket, async () => {
      await call(writer, 'create', 'messages', { text: 'four', tag: 'c' })
      const two = (await findRecords(writer, 'messages', { text: 'two' }))[0]!
      await call(writer, 'patch', 'messages', two.id, { text: 'two!' })
      await call(writer, 'remove', 'messages', two.id)
    })
    const expected = await findRecords(writer, 'messages', query)
    expect(await until(() => JSON.stringify(watch.list) === JSON.stringify(expected))).toBe(true)
    expect(resets).toEqual([])
    expect(watch.offset).not.toEqual(offsetBefore)
    await call(writer, 'create', 'messages', { text: 'five', tag: 'c' })
    await iterating
    expect(lists[0]!.map((m) => m.text)).toEqual(['two', 'one'])
    expect(lists.at(-1)!.map((m) => m.text)).toEqual(['five', 'four', 'three'])
    expect(watch.list).toEqual(await findRecords(writer, 'messages', query))
    await watch.unwatch()
  })

  it('gets a reset, and says so, when the server cannot resume (no event history)', async () => {
    const server = servers[1]!
    const bob = await signup(server.url, 'bob@example.com')
    const writer = await connectSocket(server.url, bob.token)
    sockets.push(writer)
    const { socket, client } = clientOf(server.url, bob)
    sockets.push(socket)
    const query = { tag: 'r', $sort: { id: 1 } }
    const watch = client.service('messages').watch({ query })
    await watch.ready
    const resets: LiveChange<unknown>[] = []
    watch.on('reset', (reset: LiveChange<unknown>) => resets.push(reset))
    await cut(socket, async () => {
      await call(writer, 'create', 'messages', { text: 'while away', tag: 'r' })
    })
    expect(await until(() => resets.length === 1)).toBe(true)
    expect(resets[0]).toMatchObject({ reset: true })
    expect(watch.list).toEqual(await findRecords(writer, 'messages', query))
    await watch.unwatch()
  })

  it('answers a resume from an offset the history never gave out with a reset', async () => {
    const server = servers[0]!
    const carol = await signup(server.url, 'carol@example.com')
    const socket = await connectSocket(server.url, carol.token)
    sockets.push(socket)
    const fresh = await RawWatch.start(socket, 'messages', { tag: 'c' })
    const resumed = await call<{ reset?: boolean; records: unknown[] }>(
      socket,
      'watch',
      'messages',
      { tag: 'c' },
      {
        resume: { offset: 'not-an-offset', records: [] }
      }
    )
    expect(resumed).toMatchObject({ reset: true, records: fresh.list })
  })
})
