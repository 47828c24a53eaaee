import { afterAll, describe, expect, it } from '@jest/globals'
import authClientModule from '@feathersjs/authentication-client'
import { feathers } from '@feathersjs/feathers'
import socketioClientModule from '@feathersjs/socketio-client'
import { authentication } from '../../src/interfaces/client/authentication/authentication-client.js'
import { createClient } from '../../src/interfaces/client/client-app.js'
import { rest } from '../../src/interfaces/client/rest/rest-client.js'
import { socketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import type { Services } from '../../src/reference-services.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { gravatar } from '../support/gravatar.js'
import { discoverPostgres } from '../support/postgres-server.js'
import { connectSocket, request, signup } from '../support/reference-server.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'

/*
 * The reference chat's resolvers end to end, on every store at hand: messages carry their author over REST and
 * socket.io (our clients and the official Feathers ones), never the password; a page of 25 messages is one query of
 * the users service; and 25 messages created at once, delivered to three listeners, cost one users query per
 * message (its call's), plus one per event when the store publishes them itself (PostgreSQL, RethinkDB) — never
 * one per recipient. PostgreSQL and RethinkDB suites are skipped with their one loud line when none is reachable.
 */

const postgres = await discoverPostgres()
const rethinkdb = await discoverRethinkDb()
afterAll(async () => {
  await postgres?.stop()
  await rethinkdb?.stop()
})

type StoreCase = [name: string, live: boolean, env: () => Promise<Record<string, string>>]
const stores: StoreCase[] = [
  ['memory', false, async () => ({})],
  ...(postgres
    ? [['postgres', true, async () => ({ STORE: 'postgres', POSTGRES_URL: await postgres.fresh() })] as StoreCase]
    : []),
  ...(rethinkdb
    ? [
        [
          'rethinkdb',
          true,
          async () => ({
            STORE: 'rethinkdb',
            RETHINKDB_URL: `rethinkdb://${rethinkdb.host}:${rethinkdb.port}/${rethinkdb.db}`
          })
        ] as StoreCase
      ]
    : [])
]

const socketioClient = socketioClientModule.default
const authClient = authClientModule.default
type FeathersSocket = Parameters<typeof socketioClient>[0]
type Received = { text: string; userId: unknown; user?: Record<string, unknown> }

describe.each(stores)('resolved messages on %s', (_name, live, storeEnv) => {
  it('carry their author, batched per call and per event, never per recipient', async () => {
    const server: AuthServer = await startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4', ...(await storeEnv()) })
    const sockets: { disconnect(): unknown }[] = []
    try {
      let usersFinds = 0
      server.app.service('users').hooks({ before: { find: [() => void usersFinds++] } })
      const ann = await signup(server.url, 'Ann@X.io')
      const author = { id: ann.id, email: 'Ann@X.io', avatar: gravatar('Ann@X.io') }

      // Three listeners: two official Feathers clients and one of ours, each logged in as someone else.
      const received: Received[][] = []
      for (const email of ['bob@x.io', 'cy@x.io']) {
        await signup(server.url, email)
        const socket = await connectSocket(server.url)
        sockets.push(socket)
        const official = feathers()
          .configure(socketioClient(socket as unknown as FeathersSocket))
          .configure(authClient({ storage: new authClientModule.MemoryStorage() }))
        await official.authenticate({ strategy: 'local', email, password: 'secret-pw' })
        const events: Received[] = []
        official.service('messages').on('created', (message: Received) => events.push(message))
        received.push(events)
      }
      await signup(server.url, 'dee@x.io')
      const ourSocket = await connectSocket(server.url)
      sockets.push(ourSocket)
      const ours = createClient<Services>().configure(socketio(ourSocket)).configure(authentication())
      await ours.authenticate({ strategy: 'local', email: 'dee@x.io', password: 'secret-pw' })
      const ourEvents: Received[] = []
      ours.service('messages').on('created', (message) => ourEvents.push(message as Received))
      received.push(ourEvents)

      const before = usersFinds
      const created = await Promise.all(
        Array.from({ length: 25 }, (_, n) =>
          request(server.url, 'POST', '/messages', { token: ann.token, body: { text: `m${n}` } })
        )
      )
      for (const answer of created) expect([answer.status, (answer.body as Received).user]).toEqual([201, author])
      for (let waited = 0; received.some((events) => events.length < 25) && waited < 10_000; waited += 20)
        await new Promise((resolve) => setTimeout(resolve, 20))
      for (const events of received) {
        expect(events).toHaveLength(25)
        for (const event of events) expect(event.user).toEqual(author)
      }
      // At most one query per create call and, on a live store, one per event, whatever their recipients (125 and
      // more if per recipient): calls of one user's token and a grouped insert's events share a loader in a tick.
      const afterCreates = usersFinds
      expect(afterCreates - before).toBeGreaterThan(0)
      expect(afterCreates - before).toBeLessThanOrEqual(live ? 50 : 25)

      // A page of 25 over REST (our client) is one users query, each message with its author.
      const client = createClient<Services>().configure(rest(server.url).fetch(fetch))
      const page = await client
        .service('messages')
        .find({ query: { $limit: 25 }, headers: { Authorization: `Bearer ${ann.token}` } })
      expect(usersFinds - afterCreates).toBe(1)
      expect(page.data).toHaveLength(25)
      for (const message of page.data) expect(message.user).toEqual(author)
      expect(JSON.stringify(page)).not.toMatch(/password|\$2b\$/)
    } finally {
      for (const socket of sockets) socket.disconnect()
      await server.close()
    }
  })
})
