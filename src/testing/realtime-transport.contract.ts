import type { App } from '../application/app.js'
import type { Connection, Data, NullableId, Query } from '../domain/service/service.js'
import { defineContract } from './contract.js'
import { realtimeContractApp } from './realtime-contract-app.js'

/** An event as a client received it: `<path> <event>` with its data. */
export interface ReceivedEvent {
  path: string
  event: string
  data: unknown
}

/** The events one client received, in order; a driver adds each as it arrives. */
export class ReceivedEvents {
  readonly all: ReceivedEvent[] = []
  private readonly waiting = new Set<() => void>()

  add(event: ReceivedEvent): void {
    this.all.push(event)
    for (const wake of this.waiting) wake()
  }

  /** The data of the first event `<path> <event>` received (now or later) for which `test` holds. */
  async next(path: string, event: string, test: (data: unknown) => boolean = () => true): Promise<unknown> {
    const matches = (received: ReceivedEvent) =>
      received.path === path && received.event === event && test(received.data)
    for (;;) {
      const found = this.all.find(matches)
      if (found) return found.data
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiting.delete(wake)
          resolve()
        }
        this.waiting.add(wake)
      })
    }
  }

  /** The data of every `<path> <event>` received so far. */
  of(path: string, event: string): unknown[] {
    return this.all.filter((received) => received.path === path && received.event === event).map(({ data }) => data)
  }
}

/** One client connection of the transport under test, in the transport's own wire format. */
export interface RealtimeClient {
  /**
   * Calls `method` of the service at `path` (ids, data and query by meaning; the driver lays them out
   * as its wire does). Resolves with the result, rejects with the error envelope the transport
   * answered (`{ name, message, code, className, data? }`).
   */
  call(path: string, method: string, parts?: { id?: NullableId; data?: unknown; query?: Query }): Promise<unknown>
  readonly events: ReceivedEvents
  /** Resolves when the connection ended, whichever side ended it. */
  readonly closed: Promise<void>
  /** Ends the connection from the client's side. */
  close(): void
}

/** A real-time transport the contract started, serving one app. */
export interface RunningRealtimeTransport {
  /**
   * Opens a client connection, sending `headers` with its handshake; rejects with an Error carrying
   * the server's message when the transport refuses the connection.
   */
  connect(headers?: Record<string, string>): Promise<RealtimeClient>
  /** The transport's own (RealtimeTransport in src/interfaces/realtime/realtime-transport.ts). */
  dropConnections(): void
  disconnectAll(): void
  /** Stops the transport and what it listens on, once its connections are gone. */
  close(): Promise<void>
}

/** How a transport runs the contract: its name, and how to start it for an app with a client of its wire. */
export interface RealtimeTransportContractOptions {
  /** The transport's name: `provider` of its connections and of its calls' params. */
  provider: string
  /** Starts the transport for `app`, on 127.0.0.1 (e.g. its factory on a node HTTP server). */
  start(app: App): Promise<RunningRealtimeTransport>
}

/**
 * Publishes a notice to every connection and waits until `clients` received it. Connections get
 * events in the order they were published, so after this a client has every earlier event meant
 * for it: what it lacks was not sent to it.
 */
async function flush(observer: RealtimeClient, clients: RealtimeClient[]): Promise<void> {
  const mark = `flush-${Math.random()}`
  await observer.call('notices', 'create', { data: { mark } })
  await Promise.all(
    clients.map((client) => client.events.next('notices', 'created', (data) => (data as Data).mark === mark))
  )
}

/** Resolves with the next connection the app sees disconnect. */
const nextDisconnect = (app: App) => new Promise<Connection>((resolve) => app.once('disconnect', resolve))

/** Resolves with the next connection the app sees open. */
const nextConnection = (app: App) => new Promise<Connection>((resolve) => app.once('connection', resolve))

/**
 * The real-time transport contract: the same calls, errors, events per channel, logins and
 * disconnects through every transport, observed through its own wire format by its client.
 * Socket.io (src/interfaces/socketio) and the example transport (examples/add-a-transport.ts) both
 * pass it; a new transport runs it with a client of its own.
 */
export const runRealtimeTransportContract = defineContract<RealtimeTransportContractOptions>(
  'Real-time transport',
  ({ group, test, expect, beforeAll, afterAll }, options) => {
    let app: App
    let transport: RunningRealtimeTransport
    const clients: RealtimeClient[] = []
    const connect = async (headers?: Record<string, string>) => {
      const client = await transport.connect(headers)
      clients.push(client)
      return client
    }

    beforeAll(async () => {
      app = realtimeContractApp()
      await app.setup()
      transport = await options.start(app)
    })

    afterAll(async () => {
      transport.disconnectAll()
      await Promise.all(clients.map((client) => client.closed))
      await transport.close()
      await app.teardown()
    })
    group('calls', () => {
      test('answers every method with what the service returned, ids and data as sent', async () => {
        const client = await connect()
        const sent = { text: 'hello', tags: ['a'], nested: { n: 1 } }
        const message = (await client.call('messages', 'create', { data: sent })) as Data
        expect(message).toEqual({ ...sent, id: expect.any(Number) })
        const id = message.id as number
        await expect(client.call('messages', 'get', { id })).resolves.toEqual(message)
        await expect(client.call('messages', 'find', { query: { text: 'hello' } })).resolves.toEqual([message])
        await expect(client.call('messages', 'patch', { id, data: { text: 'patched' } })).resolves.toEqual({
          ...message,
          text: 'patched'
        })
        await expect(client.call('messages', 'update', { id, data: { text: 'updated' } })).resolves.toEqual({
          id,
          text: 'updated'
        })
        await expect(client.call('messages', 'shout', { data: { text: 'hi' } })).resolves.toEqual({ shouted: 'HI' })
        await expect(client.call('messages', 'remove', { id })).resolves.toEqual({ id, text: 'updated' })
        await expect(client.call('messages', 'find', { query: { text: 'updated' } })).resolves.toEqual([])
      })

      test('makes external calls: params.provider names the transport, the query arrives as sent', async () => {
        const client = await connect()
        await expect(client.call('whoami', 'find', { query: { page: 2, tag: 'x' } })).resolves.toEqual({
          provider: options.provider,
          user: null,
          query: { page: 2, tag: 'x' }
        })
      })

      test("answers errors in Feathers' envelope: the service's own, unknown paths and methods, no internals", async () => {
        const client = await connect()
        await expect(client.call('failing', 'get', { id: 7 })).rejects.toEqual({
          name: 'BadRequest',
          message: 'Not a good id',
          code: 400,
          className: 'bad-request',
          data: { id: 7 },
          errors: {}
        })
        await expect(client.call('messages', 'get', { id: 999 })).rejects.toMatchObject({
          name: 'NotFound',
          code: 404,
          message: "No record found for id '999'"
        })
        const internal = (await client.call('failing', 'find').catch((error: unknown) => error)) as Data
        expect(internal).toMatchObject({ name: 'GeneralError', code: 500 })
        expect(JSON.stringify(internal)).not.toContain('Secret internal detail')
        await expect(client.call('nowhere', 'find')).rejects.toMatchObject({ name: 'NotFound', code: 404 })
        await expect(client.call('messages', 'setup')).rejects.toMatchObject({ name: 'MethodNotAllowed', code: 405 })
        await expect(client.call('whoami', 'create', { data: {} })).rejects.toMatchObject({
          name: 'MethodNotAllowed',
          code: 405
        })
        // The connection still serves calls after its errors.
        await expect(client.call('messages', 'find', { query: { text: 'none' } })).resolves.toEqual([])
      })
    })

    group('logins', () => {
      test('logs a connection in and out with calls of the authentication service', async () => {
        const client = await connect()
        const login = await client.call('authentication', 'create', {
          data: { strategy: 'local', email: 'ann@example.com', password: 'ann-secret' }
        })
        expect(login).toMatchObject({ accessToken: 'token-1', user: { id: 1, email: 'ann@example.com' } })
        await expect(client.call('whoami', 'find')).resolves.toMatchObject({ user: { id: 1 } })
        await client.call('authentication', 'remove', { id: null })
        await expect(client.call('whoami', 'find')).resolves.toMatchObject({ user: null })
        await expect(
          client.call('authentication', 'create', { data: { strategy: 'local', email: 'ann@example.com' } })
        ).rejects.toMatchObject({ name: 'NotAuthenticated', code: 401, message: 'Invalid login' })
      })

      test('logs a connection in with the Authorization header of its handshake, and refuses a bad one', async () => {
        const client = await connect({ authorization: 'Bearer token-2' })
        await expect(client.call('whoami', 'find')).resolves.toMatchObject({ user: { id: 2 } })
        await expect(transport.connect({ authorization: 'Bearer forged' })).rejects.toThrow('Invalid login')
      })

      test('moves a connection between channels as it logs in and out', async () => {
        const watcher = await connect({ authorization: 'Bearer token-1' })
        const client = await connect()
        await client.call('authentication', 'create', { data: { strategy: 'jwt', accessToken: 'token-2' } })
        const seen = await watcher.call('messages', 'create', { data: { text: 'while logged in' } })
        await client.call('authentication', 'remove', { id: null })
        await watcher.call('messages', 'create', { data: { text: 'after the logout' } })
        await flush(watcher, [watcher, client])
        expect(client.events.of('messages', 'created')).toEqual([seen])
      })
    })

    group('events', () => {
      test('delivers each event to the connections of its channels only, in order, as callers get it', async () => {
        const ann = await connect({ authorization: 'Bearer token-1' })
        const bob = await connect({ authorization: 'Bearer token-2' })
        const anonymous = await connect()
        const first = await ann.call('messages', 'create', { data: { text: 'first' } })
        const second = await anonymous.call('messages', 'create', { data: { text: 'second' } })
        await flush(ann, [ann, bob, anonymous])
        for (const client of [ann, bob])
          expect(client.events.of('messages', 'created').slice(-2)).toEqual([first, second])
        expect(anonymous.events.of('messages', 'created')).toEqual([])
        expect(anonymous.events.of('notices', 'created')).toHaveLength(1)
      })
    })

    group('connections', () => {
      test('opens each connection with the app: channels pick it up, with the transport as its provider', async () => {
        const opened = nextConnection(app)
        await connect()
        const connection = await opened
        expect(connection.provider).toBe(options.provider)
        expect(app.channel('everybody').connections).toContain(connection)
        expect(app.channel('anonymous').connections).toContain(connection)
      })

      test('takes a connection the client closed out of the app and its channels', async () => {
        const opened = nextConnection(app)
        const client = await connect()
        const connection = await opened
        const gone = nextDisconnect(app)
        client.close()
        expect(await gone).toBe(connection)
        await client.closed
        expect(app.channel('everybody').connections).not.toContain(connection)
        expect(app.channel('anonymous').connections).not.toContain(connection)
      })

      test('ends every connection on dropConnections (a shutdown) and on disconnectAll, and takes new ones', async () => {
        for (const stop of [() => transport.dropConnections(), () => transport.disconnectAll()]) {
          await connect()
          await connect({ authorization: 'Bearer token-1' })
          let open = app.channel('everybody').length
          const allGone = new Promise<void>((resolve) =>
            app.on('disconnect', function gone() {
              if (--open > 0) return
              app.off('disconnect', gone)
              resolve()
            })
          )
          stop()
          await Promise.all([...clients.map((client) => client.closed), allGone])
          expect(app.channel('everybody').length).toBe(0)
        }
        const next = await connect()
        await expect(next.call('whoami', 'find')).resolves.toMatchObject({ provider: options.provider })
      })
    })
  }
)
