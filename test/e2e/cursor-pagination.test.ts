import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import { feathers, type Application } from '@feathersjs/feathers'
import restClientModule from '@feathersjs/rest-client'
import socketioClientModule from '@feathersjs/socketio-client'
import type { Socket } from 'socket.io-client'
import { AdapterService } from '../../src/application/adapter-service.js'
import type { Data } from '../../src/domain/service/service.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { createClient } from '../../src/interfaces/client/client-app.js'
import type { RemoteService } from '../../src/interfaces/client/remote-service.js'
import { rest } from '../../src/interfaces/client/rest/rest-client.js'
import { socketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import { ENGINES } from '../interfaces/http/http-test-server.js'
import { connect, disconnectAll } from '../interfaces/socketio/support.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'

// CommonJS packages whose `module.exports` also carries the ESM `default`.
const restClient = restClientModule.default
const socketioClient = socketioClientModule.default
type FeathersSocket = Parameters<typeof socketioClient>[0]

interface Page {
  total?: number
  limit?: number
  skip: number
  data: { name: string }[]
  next?: string | null
  prev?: string | null
}

/**
 * Cursor pagination over the wire, with the official Feathers clients (REST with fetch, socket.io) and
 * plumage's own client (`iterate`): pages walk by `$after`/`next`, a page without cursor parameters keeps
 * Feathers' shape exactly, and a bad cursor is a 400 the clients see as BadRequest with the reason.
 */
describe.each(ENGINES)('cursor pagination on %s', (engine) => {
  let server: AuthServer
  const sockets: Socket[] = []
  const ranks = [5, 3, 9, 1, 3, 7, 2, 8, 3, 6, 4]
  const byRank = ranks
    .map((rank, index) => ({ name: `p${String(index).padStart(2, '0')}`, rank }))
    .sort((a, b) => a.rank - b.rank || a.name.localeCompare(b.name))
    .map((record) => record.name)

  beforeAll(async () => {
    server = await startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4', HTTP: engine })
    // Numeric ids in creation order: ties on rank fall back to them, which is name order here.
    server.app.use('pages', new AdapterService(new InMemoryStore(), { paginate: { default: 4, max: 20 }, multi: true }))
    await server.app
      .service('pages')
      .create(ranks.map((rank, index) => ({ name: `p${String(index).padStart(2, '0')}`, rank })))
  })
  afterEach(() => disconnectAll(server.app, sockets))
  afterAll(() => server.close())

  async function officialSocket(): Promise<Application> {
    const socket = await connect(server.url)
    sockets.push(socket)
    return feathers().configure(socketioClient(socket as unknown as FeathersSocket))
  }
  const officialRest = (): Application => feathers().configure(restClient(server.url).fetch(fetch))

  async function walk(app: Application, query: Record<string, unknown>): Promise<string[]> {
    const names: string[] = []
    let cursor: string | null | undefined = ''
    while (typeof cursor === 'string') {
      const page = (await app.service('pages').find({ query: { ...query, $after: cursor } })) as Page
      names.push(...page.data.map((record) => record.name))
      cursor = page.next
    }
    return names
  }

  for (const [transport, open] of [
    ['REST', async () => officialRest()],
    ['socket.io', officialSocket]
  ] as const) {
    describe(`official client over ${transport}`, () => {
      it('keeps the Feathers page shape when no cursor parameter is sent', async () => {
        const page = (await (await open()).service('pages').find({ query: { $sort: { rank: 1 } } })) as Page
        expect(Object.keys(page)).toEqual(['total', 'limit', 'skip', 'data'])
        expect(page.total).toBe(ranks.length)
      })

      it('walks every record once by $after and next, forward and (with $before and prev) back', async () => {
        const app = await open()
        expect(await walk(app, { $sort: { rank: 1 } })).toEqual(byRank)
        const last = (await app.service('pages').find({ query: { $sort: { rank: 1 }, $before: '' } })) as Page
        expect(last.data.map((record) => record.name)).toEqual(byRank.slice(-4))
        expect(last.next).toBeNull()
        const before = (await app
          .service('pages')
          .find({ query: { $sort: { rank: 1 }, $before: last.prev, $count: false } })) as Page
        expect(Object.keys(before)).toEqual(['limit', 'skip', 'data', 'next', 'prev'])
        expect(before.data.map((record) => record.name)).toEqual(byRank.slice(-8, -4))
      })

      it('answers a 400 naming the problem for a tampered cursor, another sort, or a cursor with $skip', async () => {
        const pages = (await open()).service('pages')
        const first = (await pages.find({ query: { $sort: { rank: 1 }, $after: '' } })) as Page
        const cursor = first.next!
        const edited = cursor.replace(/^./, (char) => (char === 'A' ? 'B' : 'A'))
        await expect(pages.find({ query: { $sort: { rank: 1 }, $after: edited } })).rejects.toMatchObject({
          name: 'BadRequest',
          code: 400,
          message: expect.stringMatching(/^Invalid cursor: it is malformed or was modified/)
        })
        await expect(pages.find({ query: { $sort: { rank: -1 }, $after: cursor } })).rejects.toMatchObject({
          code: 400,
          message: expect.stringMatching(/made for another query or \$sort/)
        })
        await expect(pages.find({ query: { $sort: { rank: 1 }, $after: cursor, $skip: 4 } })).rejects.toMatchObject({
          code: 400,
          message: expect.stringMatching(/\$skip cannot be combined with a cursor/)
        })
      })
    })
  }

  for (const [transport, open] of [
    ['REST', async () => createClient().configure(rest(server.url).fetch(fetch))],
    [
      'socket.io',
      async () => {
        const socket = await connect(server.url)
        sockets.push(socket)
        return createClient().configure(socketio(socket))
      }
    ]
  ] as const) {
    it(`plumage's client iterates every record over ${transport}, page after page`, async () => {
      const pages = (await open()).service('pages') as RemoteService<Data>
      const names: string[] = []
      for await (const record of pages.iterate({ $sort: { rank: 1 }, $limit: 3 })) names.push(String(record.name))
      expect(names).toEqual(byRank)
      const filtered: unknown[] = []
      for await (const record of pages.iterate({ name: { $in: ['p08', 'p01', 'p04'] }, $limit: 2 }))
        filtered.push(record.name)
      expect(filtered).toEqual(['p01', 'p04', 'p08'])
    })
  }
})
