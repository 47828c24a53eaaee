import authClientModule from '@feathersjs/authentication-client'
import { feathers } from '@feathersjs/feathers'
import socketioClientModule from '@feathersjs/socketio-client'
import { io, type Socket } from 'socket.io-client'
import { authentication, SESSION_EXPIRED } from '../../src/interfaces/client/authentication/authentication-client.js'
import { createClient } from '../../src/interfaces/client/client-app.js'
import type { LiveWatch } from '../../src/interfaces/client/live-watch.js'
import { idempotentWrites } from '../../src/interfaces/client/retries/idempotent-writes.js'
import { socketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import { PASSWORD } from '../../src/testing/instances/instance-calls.js'

/*
 * The two kinds of client the chaos harness (chaos-harness.ts) drives, each on its own socket.io connection to a
 * TCP proxy: plumage's client (socket.io transport, idempotentWrites, authentication, a live query of its own
 * writes) and the official Feathers v5 client (@feathersjs/socketio-client, authentication-client) with socket.io's
 * own `retries` and `ackTimeout`, which resend a call without any key.
 */

// CommonJS packages whose `module.exports` also carries the ESM `default`.
const feathersSocketio = socketioClientModule.default
const feathersAuth = authClientModule.default
type FeathersSocket = Parameters<typeof feathersSocketio>[0]

export type ChaosClientKind = 'plumage' | 'feathers'

export interface ChaosClient {
  socket: Socket
  /** One create of `{ text, c }`; with `key`, that idempotency key (plumage only). */
  write(text: string, key?: string): Promise<unknown>
  /** Whether the client's live view equals a fresh `find` of its query now (plumage); undefined without a view. */
  converged(): Promise<boolean | undefined>
  /** Times the live view was answered afresh (`reset`) after a reconnect. */
  resets: number
  /** Access tokens renewed with the refresh token (plumage), and sessions that could not be (`session-expired`). */
  refreshes: number
  expired: number
  /** Why the socket last went away (socket.io's reason), for a stalled client's log line. */
  lastDisconnect?: string
  /** What differs between the live view and a fresh find (plumage), for a divergent view's log line. */
  diagnose?(): Promise<string>
  close(): void
}

/** Reconnection as a browser tab would: fast, so that a drop costs the run little time. */
const RECONNECT = { transports: ['websocket'], forceNew: true, reconnectionDelay: 50, reconnectionDelayMax: 300 }

/** Client `n`'s view: its own newest writes (an equality filter, so each write reaches one view). */
export const viewQuery = (n: number) => ({ c: n, $sort: { id: -1 }, $limit: 5 })

const ids = (list: Record<string, unknown>[]) => JSON.stringify(list.map((record) => record.id))

export async function plumageClient(url: string, email: string, n: number): Promise<ChaosClient> {
  const socket = io(url, RECONNECT)
  const client = createClient()
    .configure(socketio(socket, { timeout: 4000 }))
    .configure(idempotentWrites({ delay: 100, maxDelay: 1000, retries: 50 }))
    .configure(authentication())
  await client.authenticate({ strategy: 'local', email, password: PASSWORD })
  const messages = client.service('messages')
  const watch: LiveWatch<Record<string, unknown>> = messages.watch({ query: viewQuery(n) })
  await watch.ready
  const chaos: ChaosClient = {
    socket,
    resets: 0,
    refreshes: 0,
    expired: 0,
    write: (text, key) => messages.create({ text, c: n }, key ? { query: { $idempotencyKey: key } } : {}),
    async converged() {
      const found = (await messages.find({ query: viewQuery(n) })) as unknown
      const list = Array.isArray(found) ? found : (found as { data: Record<string, unknown>[] }).data
      return ids(list as Record<string, unknown>[]) === ids(watch.list)
    },
    async diagnose() {
      const state = `offset ${watch.offset} resets ${chaos.resets} connected ${socket.connected} events ${history.slice(-12).join(' ')}`
      const found = (await messages.find({ query: viewQuery(n) }).catch((error: Error) => error)) as unknown
      if (found instanceof Error) return `find failed (${found.message}); view ${ids(watch.list)} ${state}`
      const list = (Array.isArray(found) ? found : (found as { data: Record<string, unknown>[] }).data) as Record<
        string,
        unknown
      >[]
      const have = new Map(watch.list.map((record) => [record.id, record]))
      const want = new Set(list.map((record) => record.id))
      const missing = list.filter((record) => !have.has(record.id)).map((record) => record.text)
      const extra = watch.list.filter((record) => !want.has(record.id)).map((record) => record.text)
      return `view ${ids(watch.list)} find ${ids(list)} missing ${JSON.stringify(missing)} extra ${JSON.stringify(extra)} ${state}`
    },
    close() {
      void watch.unwatch()
      socket.disconnect()
    }
  }
  const history: string[] = []
  const note = (line: string) => history.push(`${new Date().toISOString().slice(14, 23)}:${line}`)
  watch.on('reset', (change) => (chaos.resets++, note(`reset@${change.offset}`)))
  client.on('login', (result) => {
    if ((result as { authentication?: { strategy?: string } }).authentication?.strategy === 'refresh') chaos.refreshes++
  })
  client.on(SESSION_EXPIRED, (error) => (chaos.expired++, note(`session-expired ${(error as Error).message}`)))
  watch.on('change', (change) => note(`chg@${change.offset}:${change.changes.map((c) => c.type[0]).join('')}`))
  socket.on('connect', () => note('conn'))
  socket.on('disconnect', (reason) => note(`disc:${reason}`))
  socket.on('connect_error', (error) => note(`cerr:${error.message}`))
  // A failed resume is retried (by the watch, while connected); the final comparison shows whether the view caught up.
  watch.on('error', (error) => note(`err:${(error as Error).message}`))
  return chaos
}

export async function feathersClient(url: string, email: string, n: number): Promise<ChaosClient> {
  // socket.io resends a call whose ack did not come within ackTimeout, up to `retries` times: no key, no dedupe.
  const socket = io(url, { ...RECONNECT, retries: 5, ackTimeout: 3000 })
  const app = feathers()
    .configure(feathersSocketio(socket as unknown as FeathersSocket))
    .configure(feathersAuth({ storage: new authClientModule.MemoryStorage() }))
  await app.authenticate({ strategy: 'local', email, password: PASSWORD })
  return {
    socket,
    resets: 0,
    refreshes: 0,
    expired: 0,
    write: (text) => app.service('messages').create({ text, c: n }),
    converged: () => Promise.resolve(undefined),
    close: () => void socket.disconnect()
  }
}

export async function openClient(kind: ChaosClientKind, url: string, email: string, n: number): Promise<ChaosClient> {
  const client = await (kind === 'plumage' ? plumageClient(url, email, n) : feathersClient(url, email, n))
  client.socket.on('disconnect', (reason) => (client.lastDisconnect = reason))
  return client
}
