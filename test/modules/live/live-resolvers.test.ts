import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import { applyChanges, type WindowChange } from '../../../src/domain/query/live-window.js'
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

  /** The users finds the loaders make (an `$in` of ids), counted while `counting`. */
  let userLookups = 0
  let counting = false

  beforeAll(async () => {
    server = await startReferenceServer()
    server.app.service('users').hooks({
      before: {
        find: [
          async (context) => void (counting && (context.params.query?.id as { $in?: unknown })?.$in && userLookups++)
        ]
      }
    })
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
  it("resolves a resumed watch's missed messages together: one users lookup, not one per message", async () => {
    const a = await open(alice)
    const b = await open(bob)
    const c = await open(alice)
    const query = { $sort: { id: -1 }, $limit: 20 }
    const first = await RawWatch.start(c, 'messages', query)
    await first.unwatch()
    for (let n = 0; n < 10; n++) await call(n % 2 ? a : b, 'create', 'messages', { text: `missed ${n}` })
    const frames: { id: string; changes: WindowChange[] }[] = []
    c.on('live', (frame: { id: string; changes: WindowChange[] }) => frames.push(frame))
    userLookups = 0
    counting = true
    const answer = await call<{ id: string; changes?: unknown[] }>(c, 'watch', 'messages', query, {
      resume: { offset: first.offset, records: first.list }
    })
    expect(answer.changes).toEqual([])
    expect(await until(() => frames.filter((frame) => frame.id === answer.id).length >= 10)).toBe(true)
    counting = false
    let list = first.list
    for (const frame of frames) if (frame.id === answer.id) list = applyChanges(list, frame.changes)
    expect(list).toEqual(await findRecords(c, 'messages', query))
    expect(list.slice(0, 2).map((m) => (m.user as { email?: string }).email)).toEqual([
      'alice@example.com',
      'bob@example.com'
    ])
    // The view's first read, and the replay's ten messages by two authors (one lookup each before: eleven).
    expect(userLookups).toBeLessThanOrEqual(2)
    await call(c, 'unwatch', answer.id)
  })
})
