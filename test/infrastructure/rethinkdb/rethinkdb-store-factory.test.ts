import { describe, expect, it } from '@jest/globals'
import { createServer } from 'node:net'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import { PrometheusMetrics } from '../../../src/infrastructure/metrics/prometheus-metrics.js'
import { RethinkDbStoreFactory } from '../../../src/infrastructure/rethinkdb/rethinkdb-store-factory.js'
import type { RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { parseExposition, valueOf } from '../../support/prometheus-text.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

describe('RethinkDbStoreFactory.health', () => {
  it('reports the server unreachable within its timeout while no server answers', async () => {
    const factory = new RethinkDbStoreFactory(`rethinkdb://127.0.0.1:${await closedPort()}/plumage`, { timeoutMs: 500 })
    const health = await factory.health(100)
    expect(health).toMatchObject({ ready: false, checks: { reachable: false } })
    expect(health.problems[0]).toMatch(
      /^RethinkDB at 127\.0\.0\.1:\d+ (did not answer within 100 ms|cannot be reached)$/
    )
    await factory.close()
  })
})

// Needs a real server (RETHINKDB_URL or Docker); otherwise the run prints the loud SKIPPED line.
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

withServer('RethinkDbStoreFactory against a server', () => {
  it("gives a store the service's indexes and schema: setup creates and waits for the indexes", async () => {
    const { host, port, db } = server!
    const factory = new RethinkDbStoreFactory(`rethinkdb://${host}:${port}/${db}`, { timeoutMs: 15_000, watch: false })
    try {
      const store = factory.create('indexed_probe', {
        indexes: [{ fields: ['room', 'at'] }, { fields: ['author.name'], name: 'author' }],
        schema: { type: 'object', required: ['at'], properties: { at: { type: 'number' } } }
      }) as RethinkDbStore
      await store.setup()
      expect((await store.table().indexList().run()).sort()).toEqual(['author', 'room_at'])
      await store.create(
        [
          { room: 'a', at: 2, author: { name: 'Ann' } },
          { room: 'a', at: 1 },
          { room: 'b', at: 3 }
        ],
        {}
      )
      const query = parseQuery({ room: 'a', $sort: { at: -1 }, $limit: 5, $select: ['at'] })
      expect((await store.find(query)).map((record) => record.at)).toEqual([2, 1])
      expect(await store.table().getAll('Ann', { index: 'author' }).count().run()).toBe(1)
    } finally {
      await factory.close()
    }
  })

  it('reports its feeds per table and the event-log lag of the newest applied event to the metrics port', async () => {
    const { host, port, db } = server!
    let now = 0
    const metrics = new PrometheusMetrics({ defaultMetrics: false, now: () => now })
    const scrape = async () => parseExposition((await metrics.render()).body)
    const factory = new RethinkDbStoreFactory(`rethinkdb://${host}:${port}/${db}`, { timeoutMs: 15_000, metrics })
    const state = (exposition: Awaited<ReturnType<typeof scrape>>, table: string, name: string) =>
      valueOf(exposition, 'plumage_feed_state', { table, state: name })
    try {
      const store = factory.create('metrics_probe')
      await store.setup!()
      let unwatch = () => {}
      const applied = new Promise((resolve) => {
        unwatch = store.watch!(resolve)
      })
      await store.whenWatching!()
      const live = await scrape()
      expect([state(live, 'metrics_probe', 'live'), state(live, 'plumage_events', 'live')]).toEqual([1, 1])
      await store.create([{ text: 'measured' }], {})
      await applied
      // The event's time is the server's clock when it was written, moments ago; the scrape's "now" is a minute later.
      now = Date.now() + 60_000
      const lag = valueOf(await scrape(), 'plumage_event_log_lag_seconds', { table: 'metrics_probe' })!
      expect(lag).toBeGreaterThan(55)
      expect(lag).toBeLessThan(65)
      unwatch()
    } finally {
      await factory.close()
    }
    const stopped = await scrape()
    expect([state(stopped, 'metrics_probe', 'stopped'), state(stopped, 'plumage_events', 'stopped')]).toEqual([1, 1])
  })

  it('is ready once the tables exist and the feeds are live, and says which feed is not', async () => {
    const { host, port, db } = server!
    // The factory opens its own pool on the module-level `r` (replacing the test server's pool).
    const factory = new RethinkDbStoreFactory(`rethinkdb://${host}:${port}/${db}`, { timeoutMs: 15_000 })
    try {
      const store = factory.create('health_probe')
      await store.setup!()
      const unwatch = store.watch!(() => {})
      await store.whenWatching!()
      await expect(factory.health(15_000)).resolves.toEqual({
        ready: true,
        checks: { reachable: true, writable: true, feeds: true },
        problems: []
      })
      unwatch()
    } finally {
      await factory.close()
      await server!.stop()
    }
  })
})
