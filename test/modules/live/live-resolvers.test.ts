import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import type { AuthServer } from '../../support/auth-server.js'
import { connectSocket, signup, startReferenceServer, type Session } from '../../support/reference-server.js'
import { call, findRecords, RawWatch, until } from './live-client.js'

/*
 * A live list shows what a `find` by the same user shows, resolvers included: the chat's messages carry their
 * author as `user` (resolveResult, through the per-call loader, never the password) in the first result and in
 * every record a later frame adds or changes.
 */
describe('live queries with resolvers', () => {
  let server: AuthServer
  let alice: Session
  let bob: Session
  const sockets: Socket[] = []
  const open = async (session: Session) => {
    const socket = await connectSocket(server.url, session.token)
    sockets.push(socket)
    return socket
  }

  beforeAll(async () => {
    server = await startReferenceServer()
    alice = await signup(server.url, 'alice@example.com')
    bob = await signup(server.url, 'bob@example.com')
  })

  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    await server.close()
  })

  it('sends added and changed messages with their author populated, as find does', async () => {
    const a = await open(alice)
    const b = await open(bob)
    await call(a, 'create', 'messages', { text: 'resolved 1' })
    const query = { $sort: { id: -1 }, $limit: 3 }
    const watchA = await RawWatch.start(a, 'messages', query)
    const watchB = await RawWatch.start(b, 'messages', query)
    expect(watchA.list[0]?.user).toMatchObject({ email: 'alice@example.com' })

    const created = await call<{ id: number }>(b, 'create', 'messages', { text: 'resolved 2' })
    for (const watch of [watchA, watchB]) {
      expect(await until(() => watch.list[0]?.id === created.id)).toBe(true)
      const added = watch.frames.at(-1)!.changes.find((change) => change.type === 'added')!
      expect((added as { record: Record<string, unknown> }).record.user).toMatchObject({ email: 'bob@example.com' })
      expect(JSON.stringify(watch.list)).not.toContain('password')
    }
    await call(b, 'patch', 'messages', created.id, { text: 'resolved 2b' })
    for (const [watch, socket] of [
      [watchA, a],
      [watchB, b]
    ] as const) {
      expect(await until(() => watch.list[0]?.text === 'resolved 2b')).toBe(true)
      expect(watch.list).toEqual(await findRecords(socket, 'messages', query))
    }
    await watchA.unwatch()
    await watchB.unwatch()
  })
})
