import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { io, type Socket } from 'socket.io-client'
import { createClient, socketio } from '../../../src/library/client.js'
import type { AuthServer } from '../../support/auth-server.js'
import { discoverPostgres } from '../../support/postgres-server.js'
import { connectSocket, signup, startReferenceServer } from '../../support/reference-server.js'
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js'
import { divergences, random, randomWrite, Watches } from './oracle-harness.js'

/*
 * The differential oracle on two instances of one PostgreSQL database (issue 39; oracle-harness.ts): live queries
 * of varied shapes by several users are watched on instance B, random writes go through A and B, and forced
 * disconnects bring a user's watches back through a load balancer (a TCP proxy per user) re-pointed to the other
 * instance, where they resume from their offsets. At every quiet point each live list equals a fresh `find` by its
 * user: 0 divergences, 0 resets. A CI-sized run (LIVE_ORACLE_PG_QUERIES, LIVE_ORACLE_PG_WRITES for more). Needs
 * PostgreSQL (POSTGRES_URL, or the binaries for a throw-away server); otherwise the loud SKIPPED line.
 */
const QUERIES = Number(process.env.LIVE_ORACLE_PG_QUERIES ?? 60)
const WRITES = Number(process.env.LIVE_ORACLE_PG_WRITES ?? 1500)
const USERS = 4
const QUIET_EVERY = Math.max(250, Math.floor(WRITES / 6))
const seed = Number(process.env.LIVE_ORACLE_SEED ?? Date.now() % 1_000_000)
const random$ = random(seed)
const { rand, int } = random$

const database = await discoverPostgres()
const withServer = database ? describe : describe.skip

withServer('live queries: the differential oracle on two PostgreSQL instances', () => {
  let a: AuthServer
  let b: AuthServer
  const proxies: TcpProxy[] = []
  /** Each user's sockets to A and to B, which its writes pick from at random. */
  const writers: [Socket, Socket][] = []
  const watchers: Socket[] = []
  const clients: ReturnType<typeof createClient>[] = []
  const owned: number[][] = []
  const ids: unknown[] = []
  const portOf = (server: AuthServer) => Number(new URL(server.url).port)

  beforeAll(async () => {
    const env = { STORE: 'postgres', POSTGRES_URL: database!.url, LIVE_MAX_WATCHES: String(QUERIES) }
    a = await startReferenceServer(env)
    b = await startReferenceServer(env)
    for (let user = 0; user < USERS; user++) {
      const session = await signup(a.url, `pg-oracle${user}@example.com`)
      ids.push(session.id)
      writers.push([await connectSocket(a.url, session.token), await connectSocket(b.url, session.token)])
      const proxy = await startTcpProxy('127.0.0.1', portOf(b))
      proxies.push(proxy)
      const socket = io(`http://127.0.0.1:${proxy.port}`, {
        transports: ['websocket'],
        forceNew: true,
        reconnectionDelay: 20,
        reconnectionDelayMax: 50,
        extraHeaders: { Authorization: `Bearer ${session.token}` }
      })
      watchers.push(socket)
      clients.push(createClient().configure(socketio(socket, { timeout: 20_000 })))
      owned.push([])
    }
  }, 60_000)

  afterAll(async () => {
    for (const socket of [...writers.flat(), ...watchers]) socket.disconnect()
    for (const proxy of proxies) await proxy.close()
    await a?.close()
    await b?.close()
    await database?.stop()
  })

  const write = () => randomWrite(random$, { ids, owned, socket: (user) => writers[user]![int(2)]! })

  it(`keeps ${QUERIES} live queries on B equal to find through ${WRITES} writes on A and B and moves`, async () => {
    // Resumes within the event history replay the missed changes: a reset would be a fresh result instead.
    const watches = new Watches(random$, clients)
    const { lives } = watches
    const watchOne = () => watches.watchOne()
    for (let i = 0; i < 30; i++) await write()
    for (let i = 0; i < QUERIES / 2; i++) watchOne()
    await watches.ready()
    const failures: string[] = []
    /** Where each user's watcher is now: B at first, then the other instance at each cut. */
    const onA = Array.from({ length: USERS }, () => false)
    let quietPoints = 0
    let cuts = 0
    for (let done = 0; done < WRITES;) {
      const burst = Math.min(1 + int(8), WRITES - done)
      const writes = Array.from({ length: burst }, () => write())
      if (lives.length < QUERIES && rand() < 0.3) watchOne()
      if (rand() < 0.03) {
        // The load balancer moves the user to the other instance, and the connection drops.
        const user = int(USERS)
        onA[user] = !onA[user]
        proxies[user]!.retarget(portOf(onA[user] ? a : b))
        watchers[user]!.io.engine.close()
        cuts++
      }
      await Promise.all(writes)
      done += burst
      if (Math.floor(done / QUIET_EVERY) > quietPoints) {
        quietPoints++
        failures.push(...(await divergences(lives, (user) => writers[user]![1])))
        expect(failures).toEqual([])
      }
    }
    while (lives.length < QUERIES) watchOne()
    failures.push(...(await divergences(lives, (user) => writers[user]![0])))
    console.log(
      `live oracle on PostgreSQL: seed ${seed}, ${lives.length} live queries, ${WRITES} writes, ${quietPoints + 1} quiet points, ${cuts} cuts, ${failures.length} divergences, ${watches.resets} resets`
    )
    expect(cuts).toBeGreaterThan(0)
    expect(watches.resets).toBe(0)
    expect(failures).toEqual([])
    for (const live of lives) await live.watch.unwatch()
  }, 300_000)
})
