import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import type { createClient } from '../../../src/library/client.js'
import type { AuthServer } from '../../support/auth-server.js'
import { connectSocket, signup, startReferenceServer, type Session } from '../../support/reference-server.js'
import { divergences, random, randomWrite, watcher, Watches } from './oracle-harness.js'

/*
 * The differential oracle of live queries (issue 39): many live queries of varied shapes (filters, $sort, $limit,
 * $skip, $select) by several users under the chat's rules (direct messages), random creates, patches and removes —
 * some while snapshots are read, many moving records across a window's edge — and forced disconnects; at every
 * quiet point each live list must equal a fresh `find` by its user: 0 divergences. CI runs a modest size;
 * LIVE_ORACLE_QUERIES=1000 LIVE_ORACLE_WRITES=100000 runs the full one.
 */
const QUERIES = Number(process.env.LIVE_ORACLE_QUERIES ?? 200)
const WRITES = Number(process.env.LIVE_ORACLE_WRITES ?? 10_000)
const USERS = 5
const QUIET_EVERY = Math.max(250, Math.floor(WRITES / 20))
const seed = Number(process.env.LIVE_ORACLE_SEED ?? Date.now() % 1_000_000)
const random$ = random(seed)
const { rand, int } = random$

describe('live queries: the differential oracle on memory', () => {
  let server: AuthServer
  const sessions: Session[] = []
  const writers: Socket[] = []
  const watchers: Socket[] = []
  const clients: ReturnType<typeof createClient>[] = []
  /** Message ids by author (rules: only the author patches or removes). */
  const owned: number[][] = []
  const ids: unknown[] = []

  beforeAll(async () => {
    // A full-size run outlives the 15-minute access token its raw sockets logged in with (they never renew it).
    server = await startReferenceServer({ LIVE_MAX_WATCHES: String(QUERIES), JWT_EXPIRES_IN: '24h' })
    for (let user = 0; user < USERS; user++) {
      const session = await signup(server.url, `oracle${user}@example.com`)
      sessions.push(session)
      ids.push(session.id)
      writers.push(await connectSocket(server.url, session.token))
      const { socket, client } = watcher(server.url, session.token)
      watchers.push(socket)
      clients.push(client)
      owned.push([])
    }
  })

  afterAll(async () => {
    for (const socket of [...writers, ...watchers]) socket.disconnect()
    await server.close()
  })

  const write = () => randomWrite(random$, { ids, owned, socket: (user) => writers[user]! })

  it(
    `keeps ${QUERIES} live queries equal to find through ${WRITES} random writes and forced disconnects`,
    async () => {
      // Resumes within the event history replay the missed changes: a reset would be a fresh result instead.
      const watches = new Watches(random$, clients)
      const { lives } = watches
      const watchOne = () => watches.watchOne()
      for (let i = 0; i < 30; i++) await write()
      for (let i = 0; i < QUERIES / 2; i++) watchOne()
      await watches.ready()
      const failures: string[] = []
      let quietPoints = 0
      let cuts = 0
      for (let done = 0; done < WRITES;) {
        // Writes in small concurrent bursts; new watches start (their snapshots read) in the middle of them.
        const burst = Math.min(1 + int(8), WRITES - done)
        const writes = Array.from({ length: burst }, () => write())
        if (lives.length < QUERIES && rand() < 0.3) watchOne()
        if (rand() < 0.004) {
          watchers[int(USERS)]!.io.engine.close()
          cuts++
        }
        await Promise.all(writes)
        done += burst
        // A long run says how far it is (LIVE_ORACLE_PROGRESS=1, as bench:live-oracle sets it).
        if (process.env.LIVE_ORACLE_PROGRESS && done % 1000 < burst)
          process.stderr.write(
            `live oracle: ${done} writes, ${lives.length} live queries, ${cuts} cuts, ${watches.resets} resets\n`
          )
        if (Math.floor(done / QUIET_EVERY) > quietPoints) {
          quietPoints++
          failures.push(...(await divergences(lives, (user) => writers[user]!)))
          expect(failures).toEqual([])
        }
      }
      while (lives.length < QUERIES) watchOne()
      failures.push(...(await divergences(lives, (user) => writers[user]!)))
      console.log(
        `live oracle: seed ${seed}, ${lives.length} live queries, ${WRITES} writes, ${quietPoints + 1} quiet points, ${cuts} cuts, ${failures.length} divergences, ${watches.resets} resets`
      )
      expect(watches.resets).toBe(0)
      expect(failures).toEqual([])
      for (const live of lives) await live.watch.unwatch()
    },
    Math.max(600_000, WRITES * 60)
  )
})
