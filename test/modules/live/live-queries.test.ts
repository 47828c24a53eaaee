import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import { LiveQueries } from '../../../src/application/live/index.js'
import type { AuthServer } from '../../support/auth-server.js'
import { connectSocket, signup, startReferenceServer, type Session } from '../../support/reference-server.js'
import { call, findRecords, RawWatch, until } from './live-client.js'

/*
 * Live queries through a real socket.io server (the composition root, memory store, the chat's rules): the answer
 * to `watch` is what `find` answers, `live` frames keep it equal to a fresh `find` through creates, patches and
 * removes, a top-N window refills from its buffer, identical watches share one view, a direct message never
 * reaches a stranger's result, and watches are bounded and freed.
 */
describe('live queries over socket.io', () => {
  let server: AuthServer
  let alice: Session
  let bob: Session
  let carol: Session
  const sockets: Socket[] = []
  const open = async (session: Session) => {
    const socket = await connectSocket(server.url, session.token)
    sockets.push(socket)
    return socket
  }
  const live = () => server.container.get<LiveQueries>(LiveQueries)

  beforeAll(async () => {
    server = await startReferenceServer({ LIVE_MAX_WATCHES: '5' })
    alice = await signup(server.url, 'alice@example.com')
    bob = await signup(server.url, 'bob@example.com')
    carol = await signup(server.url, 'carol@example.com')
  })

  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    await server.close()
  })

  it('answers what find answers, then keeps the list equal to a fresh find', async () => {
    const socket = await open(alice)
    for (const text of ['b', 'a', 'c']) await call(socket, 'create', 'messages', { text: `first ${text}` })
    const query = { $sort: { text: 1 }, $limit: 2, $select: ['text', 'userId'] }
    const watch = await RawWatch.start(socket, 'messages', query)
    expect(watch.list).toEqual(await findRecords(socket, 'messages', query))
    expect(watch.list.map((r) => r.text)).toEqual(['first a', 'first b'])

    const created = await call<{ id: number }>(socket, 'create', 'messages', { text: 'first 0' })
    expect(await until(() => watch.list[0]?.text === 'first 0')).toBe(true)
    expect(
      watch.frames
        .at(-1)!
        .changes.map((change) => change.type)
        .sort()
    ).toEqual(['added', 'removed'])
    await call(socket, 'patch', 'messages', created.id, { text: 'first z' })
    expect(await until(() => watch.list[0]?.text === 'first a')).toBe(true)
    expect(watch.list).toEqual(await findRecords(socket, 'messages', query))
    await call(socket, 'remove', 'messages', created.id)
    await until(() => false, 100)
    expect(watch.list).toEqual(await findRecords(socket, 'messages', query))
    await watch.unwatch()
  })

  it('refills a top-N window from its buffer and reads again when it runs dry', async () => {
    const socket = await open(alice)
    const ids: number[] = []
    for (let i = 0; i < 9; i++)
      ids.push((await call<{ id: number }>(socket, 'create', 'messages', { text: `refill ${i}`, tag: 'r' })).id)
    const query = { tag: 'r', $sort: { id: 1 }, $limit: 2 }
    const watch = await RawWatch.start(socket, 'messages', query)
    for (const id of ids.slice(0, 8)) {
      await call(socket, 'remove', 'messages', id)
      const expected = await findRecords(socket, 'messages', query)
      expect(await until(() => JSON.stringify(watch.list) === JSON.stringify(expected))).toBe(true)
    }
    expect(watch.list.map((r) => r.id)).toEqual([ids[8]])
    await watch.unwatch()
  })

  it('shares one view between identical watches of users with the same rules, and frees it', async () => {
    const before = live().size.views
    const first = await open(alice)
    const second = await open(alice)
    const query = { tag: 'shared', $sort: { id: -1 }, $limit: 3 }
    const one = await RawWatch.start(first, 'messages', query)
    const two = await RawWatch.start(second, 'messages', query)
    expect(live().size.views).toBe(before + 1)
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    expect(metrics).toContain(`plumage_live_views ${before + 1}`)
    expect(metrics).toMatch(/^plumage_live_watches \d+$/m)
    expect(metrics).toMatch(/^plumage_live_view_records \d+$/m)
    await call(first, 'create', 'messages', { text: 'shared one', tag: 'shared' })
    expect(await until(() => one.list.length === 1 && two.list.length === 1)).toBe(true)
    expect(one.list).toEqual(two.list)
    await one.unwatch()
    expect(live().size.views).toBe(before + 1)
    second.disconnect()
    expect(await until(() => live().size.views === before)).toBe(true)
  })

  it('never sends a direct message to a stranger, and sends it to its recipient', async () => {
    const [aliceSocket, bobSocket, carolSocket] = await Promise.all([open(alice), open(bob), open(carol)])
    const query = { tag: 'dm', $sort: { id: 1 } }
    const [seenByBob, seenByCarol] = await Promise.all([
      RawWatch.start(bobSocket, 'messages', query),
      RawWatch.start(carolSocket, 'messages', query)
    ])
    expect(live().size.views).toBeGreaterThanOrEqual(2) // different rules, different views
    await call(aliceSocket, 'create', 'messages', { text: 'for carol only', tag: 'dm', to: carol.id })
    await call(aliceSocket, 'create', 'messages', { text: 'for everyone', tag: 'dm' })
    expect(await until(() => seenByBob.list.length === 1 && seenByCarol.list.length === 2)).toBe(true)
    expect(seenByBob.list.map((r) => r.text)).toEqual(['for everyone'])
    expect(seenByBob.frames.flatMap((f) => f.changes).some((c) => c.record.text === 'for carol only')).toBe(false)
    expect(seenByBob.list).toEqual(await findRecords(bobSocket, 'messages', query))
    expect(seenByCarol.list).toEqual(await findRecords(carolSocket, 'messages', query))
  })

  it('refuses an invalid query with the same 400 as find, and bounds the watches of a connection', async () => {
    const socket = await open(alice)
    const bad = { text: { $nope: 1 } }
    const findError = await call(socket, 'find', 'messages', bad).catch((error: unknown) => error)
    const watchError = await call(socket, 'watch', 'messages', bad).catch((error: unknown) => error)
    expect(findError).toMatchObject({ code: 400 })
    expect(watchError).toEqual(findError)
    await expect(call(socket, 'watch', 'nowhere', {})).rejects.toMatchObject({ code: 404 })
    const watches = await Promise.all([1, 2, 3, 4, 5].map((n) => RawWatch.start(socket, 'messages', { n })))
    await expect(call(socket, 'watch', 'messages', { n: 6 })).rejects.toMatchObject({
      code: 429,
      message: expect.stringContaining('limit 5') as unknown
    })
    await watches[0]!.unwatch()
    await expect(call(socket, 'watch', 'messages', { n: 6 })).resolves.toMatchObject({ records: [] })
    await expect(call(socket, 'unwatch', 'no-such-id')).rejects.toMatchObject({ code: 400 })
  })

  it('serves only its own event names: a frame named after an Object method is a call like any other', async () => {
    const socket = await open(alice)
    for (const name of ['toString', 'constructor', 'hasOwnProperty', '__proto__']) {
      const error = await call(socket, name, 'messages', {}).catch((thrown: unknown) => thrown)
      expect((error as { code?: number }).code).toBeGreaterThanOrEqual(400)
      expect((error as { code?: number }).code).toBeLessThan(500)
    }
    await expect(call(socket, 'watch', 'messages', {})).resolves.toMatchObject({ records: expect.any(Array) })
  })
})
