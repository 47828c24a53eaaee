import { describe } from '@jest/globals'
import { discoverPostgres } from '../../support/postgres-server.js'
import { startReferenceServer } from '../../support/reference-server.js'
import { twoInstanceOracle } from './oracle-harness.js'

/*
 * The differential oracle on two instances of one PostgreSQL database (issue 39; the run is
 * oracle-harness.ts's twoInstanceOracle): two in-process instances of the reference app. A CI-sized run;
 * LIVE_ORACLE_PG_QUERIES and LIVE_ORACLE_PG_WRITES raise it. Needs PostgreSQL (POSTGRES_URL, or the binaries for a
 * throw-away server); otherwise the loud SKIPPED line.
 */
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip

withServer('live queries: the differential oracle on two PostgreSQL instances', () => {
  twoInstanceOracle({
    store: 'PostgreSQL',
    queries: Number(process.env.LIVE_ORACLE_PG_QUERIES ?? 60),
    writes: Number(process.env.LIVE_ORACLE_PG_WRITES ?? 1500),
    start: async (settings) => {
      const env = { STORE: 'postgres', POSTGRES_URL: database!.url, ...settings }
      const a = await startReferenceServer(env)
      const b = await startReferenceServer(env)
      return {
        a: a.url,
        b: b.url,
        close: async () => {
          await a.close()
          await b.close()
          await database!.stop()
        }
      }
    }
  })
})
