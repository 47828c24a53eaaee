import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import type { AuthServer } from '../support/auth-server.js'
import {
  call,
  connectSocket,
  request,
  signup,
  startReferenceServer,
  type Session
} from '../support/reference-server.js'

/*
 * 50 authenticated clients (half REST, half socket.io) do mixed CRUD on `messages` for a bounded
 * time, while one more socket client listens. Afterwards: no call failed, the store holds
 * created − removed records, and the listener got exactly one event per write.
 * `npm run test:soak` runs the same file for a minute (LOAD_DURATION_MS).
 */
const CLIENTS = 50
const DURATION_MS = Number(process.env.LOAD_DURATION_MS ?? 3000)

let server: AuthServer
const sockets: Socket[] = []

beforeAll(async () => {
  server = await startReferenceServer()
})
afterAll(async () => {
  for (const socket of sockets) socket.disconnect()
  await server.close()
})

interface Tally {
  created: Set<number>
  removed: Set<number>
  patches: number
  reads: number
  failures: string[]
}

/** One way to call the messages service: over REST with a token or over a logged-in socket. */
type Caller = (
  method: 'find' | 'get' | 'create' | 'patch' | 'remove',
  id?: number,
  data?: object
) => Promise<{ ok: boolean; result: unknown; error?: string }>

function restCaller(session: Session): Caller {
  return async (method, id, data) => {
    const verb = { find: 'GET', get: 'GET', create: 'POST', patch: 'PATCH', remove: 'DELETE' }[method]
    const answer = await request(server.url, verb, id === undefined ? '/messages' : `/messages/${id}`, {
      token: session.token,
      body: data
    })
    const expected = method === 'create' ? 201 : 200
    return { ok: answer.status === expected, result: answer.body, error: `${verb} ${answer.status} ${answer.text}` }
  }
}

function socketCaller(socket: Socket): Caller {
  return async (method, id, data) => {
    const args =
      method === 'find' ? [{}] : method === 'create' ? [data, {}] : method === 'patch' ? [id, data, {}] : [id, {}]
    const [error, result] = await call(socket, method, 'messages', ...args)
    return { ok: error === null, result, error: `socket ${method} ${JSON.stringify(error)}` }
  }
}

/** A small deterministic PRNG so a failing mix can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => (state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32
}

async function client(index: number, caller: Caller, deadline: number, tally: Tally): Promise<void> {
  const next = random(index + 1)
  const own: number[] = []
  let count = 0
  while (Date.now() < deadline) {
    const roll = next()
    const pick = () => own[Math.floor(next() * own.length)]!
    try {
      if (roll < 0.35 || own.length === 0) {
        const { ok, result, error } = await caller('create', undefined, { text: `client ${index} message ${count++}` })
        if (!ok) tally.failures.push(error!)
        else {
          const id = (result as { id: number }).id
          own.push(id)
          tally.created.add(id)
        }
      } else if (roll < 0.55) {
        const id = pick()
        own.splice(own.indexOf(id), 1)
        const { ok, error } = await caller('remove', id)
        if (!ok) tally.failures.push(error!)
        else tally.removed.add(id)
      } else if (roll < 0.75) {
        const { ok, error } = await caller('patch', pick(), { edited: count++ })
        if (!ok) tally.failures.push(error!)
        else tally.patches++
      } else {
        const { ok, error } = roll < 0.9 ? await caller('get', pick()) : await caller('find')
        if (!ok) tally.failures.push(error!)
        else tally.reads++
      }
    } catch (error) {
      tally.failures.push(String(error))
    }
  }
}

describe(`load: ${CLIENTS} clients for ${DURATION_MS} ms of mixed CRUD on messages`, () => {
  it(
    'loses no request and no event, and the store holds created − removed records',
    async () => {
      const sessions = await Promise.all(
        Array.from({ length: CLIENTS + 1 }, (_, index) => signup(server.url, `load${index}@x.io`))
      )
      const listenerSession = sessions.pop()!
      const listener = await connectSocket(server.url, listenerSession.token)
      sockets.push(listener)
      const events = { created: [] as number[], patched: [] as number[], removed: [] as number[] }
      for (const event of ['created', 'patched', 'removed'] as const) {
        listener.on(`messages ${event}`, (message: { id: number }) => events[event].push(message.id))
      }
      const callers = await Promise.all(
        sessions.map(async (session, index) => {
          if (index % 2 === 0) return restCaller(session)
          const socket = await connectSocket(server.url, session.token)
          sockets.push(socket)
          return socketCaller(socket)
        })
      )
      const before = ((await server.app.service('messages').find({ query: { $limit: 0 } })) as { total: number }).total

      const tally: Tally = { created: new Set(), removed: new Set(), patches: 0, reads: 0, failures: [] }
      const deadline = Date.now() + DURATION_MS
      await Promise.all(callers.map((caller, index) => client(index, caller, deadline, tally)))

      // Writes are published in the order they finish, and every write above has finished: once the
      // sentinel's event arrives, every earlier event has arrived too.
      const sentinel = new Promise<void>((resolve) =>
        listener.on('messages created', (message: { text?: string }) => message.text === 'sentinel' && resolve())
      )
      const { id: sentinelId } = (await server.app.service('messages').create({ text: 'sentinel' })) as { id: number }
      await sentinel
      events.created.splice(events.created.indexOf(sentinelId), 1)

      const writes = tally.created.size + tally.patches + tally.removed.size
      console.log(
        `load: ${tally.created.size} created, ${tally.patches} patched, ${tally.removed.size} removed, ${tally.reads} reads in ${DURATION_MS} ms (${Math.round((writes + tally.reads) / (DURATION_MS / 1000))} calls/s)`
      )
      expect(tally.failures.slice(0, 5)).toEqual([])
      expect(tally.created.size).toBeGreaterThan(CLIENTS)
      expect(tally.patches).toBeGreaterThan(0)
      expect(tally.removed.size).toBeGreaterThan(0)

      const { total } = (await server.app.service('messages').find({ query: { $limit: 0 } })) as { total: number }
      expect(total - 1 - before).toBe(tally.created.size - tally.removed.size)
      const overRest = await request(server.url, 'GET', '/messages?$limit=0', { token: listenerSession.token })
      expect(overRest.body).toMatchObject({ total })

      expect(events.created.length).toBe(tally.created.size)
      expect(new Set(events.created)).toEqual(tally.created)
      expect(events.patched.length).toBe(tally.patches)
      expect(events.removed.length).toBe(tally.removed.size)
      expect(new Set(events.removed)).toEqual(tally.removed)
    },
    DURATION_MS + 60_000
  )
})
