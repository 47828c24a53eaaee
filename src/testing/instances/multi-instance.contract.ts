import { defineContract, type ContractTools } from '../contract.js'
import { call, expectExactlyOnce, PASSWORD, signUp, textsOf, threeInstances, until } from './instance-calls.js'
import { directWriteCases } from './direct-writes.cases.js'
import { resumeCases, type InstanceCaseContext } from './resume.cases.js'

/*
 * The multi-instance contract: several real processes of the reference server (`npm start`) on one database of
 * a store that shares events between instances. Every write made through any instance reaches every client of
 * every instance once, in order, under the method's event name; a socket resumes on any instance with what it
 * missed; a killed instance's clients resume elsewhere. The kit does not start processes or open sockets (it
 * imports no runtime module): the store's test file says how, and passes it in.
 *
 *   runMultiInstanceContract({
 *     adapter: 'postgres',
 *     cases: 'all',
 *     database: async () => ({ start: (settings) => startServer({ STORE: 'postgres', ... }), tables: ... }),
 *     clients: socketIoClients // test/support/instance-clients.ts
 *   })
 */

/** A JSON line an instance logged. */
export interface InstanceLogLine {
  level: number
  msg: string
  [key: string]: unknown
}

/** One running process of the server, listening on `url`. */
export interface ServerInstance {
  readonly url: string
  /** Every log line it wrote so far. */
  readonly logs: readonly InstanceLogLine[]
  /** SIGTERM; resolves with the exit code once it exited (at once when it is gone already). */
  stop(): Promise<number | null>
  /** SIGKILL: gone without a shutdown. */
  kill(): void
}

/** Settings of an instance a case starts; the server's defaults where left out. */
export interface InstanceSettings {
  /** How long a socket's session may be resumed (SOCKET_RECOVERY_WINDOW), in seconds. */
  recoveryWindowSeconds?: number
}

/** Writes made in the database by-passing every instance (an admin UI, a script), to one table by record id. */
export interface DirectWrites {
  insert(table: string, record: { id: string; [field: string]: unknown }): Promise<void>
  /** Merges `data` into the stored record. */
  patch(table: string, id: string, data: Record<string, unknown>): Promise<void>
  remove(table: string, id: string): Promise<void>
}

/** A fresh, empty database of the store, and how to start instances on it. */
export interface SharedDatabase {
  /** Starts one more instance on this database; resolves once it serves. */
  start(settings?: InstanceSettings): Promise<ServerInstance>
  /** The name of every table (collection) the database holds: a table made twice is named twice. */
  tables(): Promise<string[]>
  /** More checks of the schema after instances started together (e.g. RethinkDB's indexes); optional. */
  checkSchema?(): Promise<void>
  /** For the `direct writes` cases. */
  direct?: DirectWrites
  /** For the `database outage` case: an instance whose connection to the database the case cuts and restores. */
  startCutOff?(): Promise<{ instance: ServerInstance; cut(): Promise<void>; restore(): Promise<void> }>
}

/** An event of the `messages` service as a client received it. */
export interface ReceivedMessageEvent {
  event: string
  data: Record<string, unknown>
}

/** A connected, logged-in socket client of an instance. */
export interface InstanceClient {
  /** Every `messages` event (created, updated, patched, removed) it received, in order. */
  readonly received: readonly ReceivedMessageEvent[]
  /** The connection's id (socket.io's `socket.id`), and whether its last connection resumed a session. */
  readonly id: string | undefined
  readonly recovered: boolean
  /** Sends a call (`create`, `authentication`, data) and resolves with the answer's arguments: [error, result]. */
  call(method: string, path: string, ...args: unknown[]): Promise<unknown[]>
  close(): void
}

/** A client that reaches its instance through a relay the case controls (a load balancer). */
export interface RelayedClient extends InstanceClient {
  /** Resolves at its next disconnection / connection (from the moment of the call). */
  disconnected(): Promise<void>
  connected(): Promise<void>
  /** Drops the relayed connection and refuses new ones (the client reconnects until restore()). */
  cut(): Promise<void>
  restore(): Promise<void>
  /** Sends the next connections to another instance. */
  retarget(instance: ServerInstance): void
}

/** Socket clients of the server's wire, as a browser would open them. */
export interface InstanceClients {
  /** A client on `url` logged in with a JWT. */
  listen(url: string, accessToken: string): Promise<InstanceClient>
  /**
   * A client through a relay in front of `instance`, reconnecting quickly: logged in with a JWT, or — given an
   * email and password — the official Feathers client with its authentication client, logged in with them.
   */
  relayed(
    instance: ServerInstance,
    login: { accessToken: string } | { email: string; password: string }
  ): Promise<RelayedClient>
}

/** How a store runs the contract. */
export interface MultiInstanceContractOptions {
  /** A fresh database of this run for one case (dropped with the run). */
  database(): Promise<SharedDatabase>
  clients: InstanceClients
}

export const runMultiInstanceContract = defineContract<MultiInstanceContractOptions>(
  'Multi-instance',
  (tools, options) => {
    const { afterEach } = tools
    const running: ServerInstance[] = []
    const clients: InstanceClient[] = []
    const context: InstanceCaseContext = {
      async database() {
        const database = await options.database()
        const cutOff = database.startCutOff?.bind(database)
        return {
          ...database,
          start: async (settings) => {
            const instance = await database.start(settings)
            running.push(instance)
            return instance
          },
          ...(cutOff && {
            startCutOff: async () => {
              const started = await cutOff()
              running.push(started.instance)
              return started
            }
          })
        }
      },
      listen: async (url, token) => {
        const client = await options.clients.listen(url, token)
        clients.push(client)
        return client
      },
      relayed: async (instance, login) => {
        const client = await options.clients.relayed(instance, login)
        clients.push(client)
        return client
      }
    }
    afterEach(async () => {
      for (const client of clients.splice(0)) client.close()
      await Promise.all(running.splice(0).map((instance) => instance.stop()))
    })
    startCases(tools, context)
    eventCases(tools, context)
    directWriteCases(tools, context)
    resumeCases(tools, context)
  }
)

function startCases({ group, test, expect }: ContractTools, context: InstanceCaseContext): void {
  group('start', () => {
    test('start together on an empty database: every instance comes up, each table made once', async () => {
      const database = await context.database()
      const started = await Promise.all([1, 2, 3, 4, 5].map(() => database.start()))
      expect(started).toHaveLength(5)
      const names = await database.tables()
      for (const name of ['messages', 'users', 'plumage_events'])
        expect(names.filter((each) => each === name)).toEqual([name])
      expect(new Set(names).size).toBe(names.length)
      await database.checkSchema?.()
      for (const instance of started) expect((await fetch(`${instance.url}/health`)).status).toBe(200)
    }, 120_000)
  })
}

function eventCases({ group, test, expect }: ContractTools, context: InstanceCaseContext): void {
  group('events', () => {
    test("publishes every write through any instance once on every instance, under the method's event name", async () => {
      const three = await threeInstances(await context.database())
      const tokens = await Promise.all(
        three.map((instance, index) => signUp(instance.url, `writer${index}@example.com`))
      )
      const clients = await Promise.all(
        three.flatMap((instance, index) => [
          context.listen(instance.url, tokens[index]!),
          context.listen(instance.url, tokens[index]!)
        ])
      )
      const expected: string[] = []
      const ids: string[] = []
      // 60 creates spread over the instances, ten at a time.
      for (let batch = 0; batch < 6; batch++) {
        const created = await Promise.all(
          Array.from({ length: 10 }, (_, index) => {
            const at = (batch * 10 + index) % 3
            return call(three[at]!.url, tokens[at]!, 'POST', 'messages', { text: `message ${batch}-${index}` })
          })
        )
        for (const { status, body } of created) {
          expect(status).toBe(201)
          ids.push(String(body.id))
          expected.push(`created ${String(body.id)}`)
        }
      }
      // The author changes their messages through every instance: update, patch, remove.
      const author = (id: string) => ids.indexOf(id) % 3
      const through = (id: string, step: number) => three[(author(id) + step) % 3]!.url
      for (const [index, id] of ids.slice(0, 20).entries()) {
        const { status } = await call(through(id, index), tokens[author(id)]!, 'PUT', `messages/${id}`, {
          text: `replaced ${index}`
        })
        expect(status).toBe(200)
        expected.push(`updated ${id}`)
      }
      await Promise.all(
        ids.slice(20, 40).map(async (id, index) => {
          const answer = await call(through(id, index + 1), tokens[author(id)]!, 'PATCH', `messages/${id}`, {
            text: `patched ${index}`
          })
          expect(answer.status).toBe(200)
          expected.push(`patched ${id}`)
        })
      )
      await Promise.all(
        ids.slice(40, 60).map(async (id, index) => {
          const { status } = await call(through(id, index + 2), tokens[author(id)]!, 'DELETE', `messages/${id}`)
          expect(status).toBe(200)
          expected.push(`removed ${id}`)
        })
      )
      expect(expected).toHaveLength(120)
      await expectExactlyOnce(expect, clients, expected)
      // The payload is the record as written, on every instance (the author is stamped by the server).
      const replaced = clients[5]!.received.find(({ event, data }) => event === 'updated' && data.id === ids[0])
      expect(replaced?.data).toMatchObject({ id: ids[0], text: 'replaced 0' })
    }, 120_000)

    test('revokes a session on every instance within a second of a logout on one: REST calls and open sockets', async () => {
      const database = await context.database()
      const [a, b] = await Promise.all([database.start(), database.start()])
      const token = await signUp(a!.url, 'revoked@example.com')
      const otherToken = await signUp(a!.url, 'other@example.com')
      const [revoked, other] = await Promise.all([context.listen(b!.url, token), context.listen(b!.url, otherToken)])
      expect((await call(b!.url, token, 'GET', 'messages')).status).toBe(200)

      expect((await call(a!.url, token, 'DELETE', 'authentication')).status).toBe(200)
      const loggedOut = Date.now()
      await until(
        'the other instance refuses the token',
        async () => (await call(b!.url, token, 'GET', 'messages')).status === 401,
        3_000
      )
      expect(Date.now() - loggedOut).toBeLessThan(1_500)
      // The socket on b is logged out too: a message the other user posts reaches only the other user.
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      const { body } = await call(a!.url, otherToken, 'POST', 'messages', { text: 'after the logout' })
      await until('the other user receives it', () => textsOf(other!).includes('after the logout'))
      // Logged in again, the socket gets the next message: one connection gets its events in order, so
      // the one before would have come first had it been sent.
      const [error] = await revoked!.call('create', 'authentication', {
        strategy: 'local',
        email: 'revoked@example.com',
        password: PASSWORD
      })
      expect(error).toBeNull()
      await call(a!.url, otherToken, 'POST', 'messages', { text: 'after logging in again' })
      await until('the socket logged in again receives it', () => textsOf(revoked!).includes('after logging in again'))
      expect(revoked!.received.some(({ data }) => data.id === body.id)).toBe(false)
    }, 60_000)
  })

  group('database outage', () => {
    test('gives an instance cut off from the database every event it missed, once, and reports 503 meanwhile', async () => {
      const database = await context.database()
      if (!database.startCutOff) throw new Error('the setup gives no startCutOff(): do not list this case')
      const direct = await database.start()
      const { instance: cutOff, cut, restore } = await database.startCutOff()
      const token = await signUp(direct.url, 'cut@example.com')
      const clients = await Promise.all([context.listen(direct.url, token), context.listen(cutOff.url, token)])
      expect((await fetch(`${cutOff.url}/health`)).status).toBe(200)

      await cut()
      await until('the cut-off instance reports 503', async () => (await fetch(`${cutOff.url}/health`)).status === 503)
      const health = (await (await fetch(`${cutOff.url}/health`)).json()) as { status: string; problems: string[] }
      expect(health.status).toBe('degraded')
      expect(health.problems.length).toBeGreaterThan(0)
      expect((await call(cutOff.url, token, 'GET', 'messages')).status).toBe(503)

      const expected: string[] = []
      for (let index = 0; index < 30; index++) {
        const { status, body } = await call(direct.url, token, 'POST', 'messages', { text: `while cut off ${index}` })
        expect(status).toBe(201)
        expected.push(`created ${String(body.id)}`)
      }
      await restore()
      await until('the instance is ready again', async () => (await fetch(`${cutOff.url}/health`)).status === 200)
      for (let index = 0; index < 10; index++) {
        const { status, body } = await call(cutOff.url, token, 'POST', 'messages', { text: `after ${index}` })
        expect(status).toBe(201)
        expected.push(`created ${String(body.id)}`)
      }
      await expectExactlyOnce(expect, clients, expected)
    }, 120_000)
  })
}
