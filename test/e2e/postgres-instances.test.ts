import { afterAll, beforeAll, describe } from '@jest/globals'
import pg from 'pg'
import { runMultiInstanceContract, type SharedDatabase } from '../../src/testing/index.js'
import { builtInstances, settingsEnv, type Instances } from '../support/app-instances.js'
import { socketIoClients } from '../support/instance-clients.js'
import { discoverPostgres } from '../support/postgres-server.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/*
 * The multi-instance contract (src/testing/instances) on PostgreSQL, every case: real instances of the built
 * server (`node dist/plumage.mjs`) with STORE=postgres on one database each case, direct writes made in SQL,
 * and an instance reaching the database through a TCP proxy for the outage case. Needs PostgreSQL
 * (POSTGRES_URL, or the binaries for a throw-away server); otherwise the run prints the loud SKIPPED line
 * (never on CI).
 */
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip

let instances: Instances
const proxies: TcpProxy[] = []

beforeAll(async () => {
  if (database) instances = await builtInstances('postgres-instances')
}, 60_000)

afterAll(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close()
  await instances?.cleanup()
  await database?.stop()
})

async function sql<R>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, values)).rows as R[]
  } finally {
    await client.end()
  }
}

/** A fresh database; instances on it run with STORE=postgres. */
async function sharedDatabase(): Promise<SharedDatabase> {
  const url = await database!.fresh()
  const start = (postgresUrl: string, env: Record<string, string> = {}) =>
    instances.start({ STORE: 'postgres', POSTGRES_URL: postgresUrl, ...env })
  return {
    start: (settings) => start(url, settingsEnv(settings)),
    async tables() {
      const rows = await sql<{ tablename: string }>(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
      return rows.map((row) => row.tablename)
    },
    // A record is a row (key, doc): what an admin's SQL writes, published by the table's trigger.
    direct: {
      insert: async (table, record) =>
        void (await sql(url, `INSERT INTO ${table} (key, doc) VALUES ($1, $2)`, [record.id, JSON.stringify(record)])),
      patch: async (table, id, data) =>
        void (await sql(url, `UPDATE ${table} SET doc = doc || $2::jsonb WHERE key = $1`, [id, JSON.stringify(data)])),
      remove: async (table, id) => void (await sql(url, `DELETE FROM ${table} WHERE key = $1`, [id]))
    },
    async startCutOff() {
      const target = new URL(url)
      const proxy = await startTcpProxy(target.hostname, Number(target.port))
      proxies.push(proxy)
      target.host = `127.0.0.1:${proxy.port}`
      const instance = await start(target.toString())
      return { instance, cut: () => proxy.cut(), restore: () => proxy.restore() }
    }
  }
}

withServer('on a real server', () => {
  runMultiInstanceContract({ adapter: 'postgres', cases: 'all', database: sharedDatabase, clients: socketIoClients })
})
