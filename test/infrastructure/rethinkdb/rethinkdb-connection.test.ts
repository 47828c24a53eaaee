import { createServer } from 'node:net'
import { r } from 'rethinkdb-ts'
import { Unavailable } from '../../../src/domain/errors/errors.js'
import { MATCH_ALL } from '../../../src/domain/query/ast.js'
import { connectRethinkDb, parseRethinkDbUrl } from '../../../src/infrastructure/rethinkdb/rethinkdb-connection.js'
import { RethinkDbStoreFactory } from '../../../src/infrastructure/rethinkdb/rethinkdb-store-factory.js'
import { RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'

/** A local port nothing listens on: connections are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

describe('parseRethinkDbUrl', () => {
  it('reads host, port and database', () => {
    expect(parseRethinkDbUrl('rethinkdb://rethinkdb:28015/plumage')).toEqual({ host: 'rethinkdb', port: 28015, db: 'plumage' })
  })

  it('defaults the port and leaves the database out when the path is empty', () => {
    expect(parseRethinkDbUrl('rethinkdb://db.example')).toEqual({ host: 'db.example', port: 28015 })
  })

  it('reads credentials', () => {
    expect(parseRethinkDbUrl('rethinkdb://app:s%40cret@10.0.0.5:29015/prod')).toEqual({
      host: '10.0.0.5', port: 29015, db: 'prod', user: 'app', password: 's@cret'
    })
  })

  it('refuses other schemes with a message that shows the expected form', () => {
    expect(() => parseRethinkDbUrl('mongodb://localhost/plumage')).toThrow('expected rethinkdb://host:port/db')
    expect(() => parseRethinkDbUrl('not a url')).toThrow('expected rethinkdb://host:port/db')
  })
})

describe('without a reachable server', () => {
  it('connectRethinkDb gives up after its timeout with Unavailable', async () => {
    const port = await closedPort()
    await expect(connectRethinkDb(`rethinkdb://127.0.0.1:${port}/plumage`, { timeoutMs: 200 })).rejects.toBeInstanceOf(Unavailable)
  })

  it('a store over a pool with no open connection answers 503 at once', async () => {
    const port = await closedPort()
    const pool = await r.connectPool({ servers: [{ host: '127.0.0.1', port }], silent: true, waitForHealthy: false })
    try {
      const store = new RethinkDbStore({ r, table: 'items', db: 'plumage' })
      const started = Date.now()
      await expect(store.find({ filter: MATCH_ALL, sort: [], skip: 0 })).rejects.toMatchObject({ name: 'Unavailable', code: 503 })
      await expect(store.create([{ name: 'x' }])).rejects.toMatchObject({ code: 503 })
      expect(Date.now() - started).toBeLessThan(1_000)
    } finally {
      await pool.drain()
    }
  })
})

describe('RethinkDbStoreFactory', () => {
  it('creates one store per table of the URL database, with the id field asked for', async () => {
    const port = await closedPort()
    const factory = new RethinkDbStoreFactory(`rethinkdb://127.0.0.1:${port}/plumage`, { timeoutMs: 100 })
    const store = factory.create('messages', { id: '_id' }) as unknown as RethinkDbStore
    expect(store).toBeInstanceOf(RethinkDbStore)
    expect(store.id).toBe('_id')
    expect(store.table().toString()).toBe('r.db("plumage").table("messages")')
    expect(store.watch).toBeInstanceOf(Function)
    await factory.close()
  })

  it('fails setup with Unavailable when the database cannot be reached, and still closes', async () => {
    const port = await closedPort()
    const factory = new RethinkDbStoreFactory(`rethinkdb://127.0.0.1:${port}/plumage`, { timeoutMs: 100 })
    const store = factory.create('messages')
    await expect(store.setup!()).rejects.toBeInstanceOf(Unavailable)
    await expect(factory.close()).resolves.toBeUndefined()
  })
})
