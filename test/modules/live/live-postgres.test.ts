import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { io, type Socket } from 'socket.io-client'
import { LiveQueries } from '../../../src/application/live/index.js'
import { createClient, socketio, type LiveChange } from '../../../src/library/client.js'
import type { AuthServer } from '../../support/auth-server.js'
import { discoverPostgres } from '../../support/postgres-server.js'
import { connectSocket, signup, startReferenceServer } from '../../support/reference-server.js'
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js'
import { call, findRecords, until } from './live-client.js'

/*
 * Live queries on two instances of one PostgreSQL database: a watch on instance A follows writes made on A and
 * on B (B's reach A through the database's event log); cut from A, its client comes back through a load
 * balancer (a TCP proxy) re-pointed to B, resumes there from its offset — the event history is the database's,
 * so B knows it — without a reset, and its list equals a fresh find again. Needs PostgreSQL (POSTGRES_URL, or
 * the binaries for a throw-away server); otherwise the loud SKIPPED line.
 */
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip

withServer('live queries on two PostgreSQL instances', () => {
  let a: AuthServer
  let b: AuthServer
  let proxy: TcpProxy
  const sockets: Socket[] = []
  const portOf = (server: AuthServer) => Number(new URL(server.url).port)

  beforeAll(async () => {
    const env = { STORE: 'postgres', POSTGRES_URL: database!.url }
    a = await startReferenceServer(env)
    b = await startReferenceServer(env)
    proxy = await startTcpProxy('127.0.0.1', portOf(a))
  }, 60_000)

  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    await proxy?.close()
    await a?.close()
    await b?.close()
    await database?.stop()
  })

  it('follows writes of both instances, and resumes on the other instance without a reset', async () => {
    const alice = await signup(a.url, 'alice@example.com')
    const onA = await connectSocket(a.url, alice.token)
    const onB = await connectSocket(b.url, alice.token)
    sockets.push(onA, onB)
    const socket = io(`http://127.0.0.1:${proxy.port}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      extraHeaders: { Authorization: `Bearer ${alice.token}` }
    })
    sockets.push(socket)
    const client = createClient().configure(socketio(socket, { timeout: 10_000 }))
    const query = { tag: 'pg', $sort: { n: -1 }, $limit: 3 }
    const watch = client.service('messages').watch({ query })
    await watch.ready
    const resets: LiveChange<unknown>[] = []
    watch.on('reset', (reset: LiveChange<unknown>) => resets.push(reset))
    const equalsFind = async () => {
      const expected = JSON.stringify(await findRecords(onB, 'messages', query))
      return until(async () => JSON.stringify(watch.list) === expected, 5000)
    }
    for (let n = 0; n < 6; n++) await call(n % 2 ? onA : onB, 'create', 'messages', { text: `m${n}`, tag: 'pg', n })
    expect(await equalsFind()).toBe(true)
    expect(watch.list.map((m) => (m as { n: number }).n)).toEqual([5, 4, 3])

    // Cut from A; writes on both meanwhile; back through the proxy, now pointing at B.
    const gone = new Promise<void>((resolve) => socket.once('disconnect', () => resolve()))
    socket.io.engine.close()
    await gone
    const top = (await findRecords(onA, 'messages', { ...query, $limit: 1 }))[0]!
    await call(onA, 'remove', 'messages', top.id)
    await call(onB, 'create', 'messages', { text: 'while away', tag: 'pg', n: 10 })
    await call(onA, 'create', 'messages', { text: 'below the window', tag: 'pg', n: -1 })
    proxy.retarget(portOf(b))
    const back = new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    socket.connect()
    await back
    expect(await equalsFind()).toBe(true)
    expect(watch.list.map((m) => (m as { n: number }).n)).toEqual([10, 4, 3])
    expect(resets).toEqual([])

    // Live again, now from B.
    await call(onA, 'patch', 'messages', watch.list[1]!.id as number, { n: 20 })
    expect(await equalsFind()).toBe(true)
    expect(watch.list.map((m) => (m as { n: number }).n)).toEqual([20, 10, 3])
    expect(b.container.get<LiveQueries>(LiveQueries).size.watches).toBe(1)
    await watch.unwatch()
  }, 60_000)
})
