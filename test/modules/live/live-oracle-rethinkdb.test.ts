import { describe } from '@jest/globals'
import type { RDatum } from 'rethinkdb-ts'
import { builtInstances } from '../../support/app-instances.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'
import { divergedIds, printInstanceLogs, twoInstanceOracle } from './oracle-harness.js'

/*
 * The differential oracle on two instances of one RethinkDB database (issue 39; the run is oracle-harness.ts's
 * twoInstanceOracle). RethinkDB's driver keeps one connection pool per process, so the two instances are real
 * processes of the built server. A CI-sized run; LIVE_ORACLE_RDB_QUERIES and LIVE_ORACLE_RDB_WRITES raise it
 * (1000 and 100000 for the full one). Needs RethinkDB (RETHINKDB_URL, RETHINKDB_BIN or Docker); otherwise the loud
 * SKIPPED line.
 */
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

withServer('live queries: the differential oracle on two RethinkDB instances', () => {
  twoInstanceOracle({
    store: 'RethinkDB',
    queries: Number(process.env.LIVE_ORACLE_RDB_QUERIES ?? 60),
    writes: Number(process.env.LIVE_ORACLE_RDB_WRITES ?? 1500),
    start: async (settings) => {
      const instances = await builtInstances('live-oracle-rdb')
      const env = {
        RETHINKDB_URL: `rethinkdb://${server!.host}:${server!.port}/${server!.db}`,
        LOG_LEVEL: 'debug',
        ...settings
      }
      const a = await instances.start(env)
      const b = await instances.start(env)
      return {
        a: a.url,
        b: b.url,
        close: async () => {
          printInstanceLogs({ A: a, B: b })
          // Events logged twice for one write: a store's write taken for a direct write (its log row came late).
          const { r } = server!
          const twice = (await r
            .db(server!.db)
            .table('plumage_events')
            .concatMap((row: RDatum) => row('events').default([]))
            .filter((event: RDatum) => event('table').eq('messages').and(event('superseded').default(false).not()))
            .group((event: RDatum) => [
              event('event'),
              event('record')('id'),
              event('record')('updatedAt').default(null)
            ])
            .count()
            .ungroup()
            .filter((group: RDatum) => group('reduction').gt(1))
            .map((group: RDatum) => group('group'))
            .run()) as unknown[]
          // Writes of one record overtaken by another before their numbers were taken (ADR 0007): not published.
          const superseded = (await r
            .db(server!.db)
            .table('plumage_events')
            .concatMap((row: RDatum) => row('events').default([]))
            .filter((event: RDatum) => event('superseded').default(false))
            .count()
            .run()) as number
          // The logged events of the records in and before a diverged list, in the log's order.
          if (divergedIds.size > 0) {
            const events = (await r
              .db(server!.db)
              .table('plumage_events')
              .orderBy('id')
              .concatMap((row: RDatum) =>
                row('events')
                  .default([])
                  .filter((event: RDatum) => r.expr([...divergedIds]).contains(event('record')('id').default(null)))
                  .map((event: RDatum) => ({ seq: row('id'), ts: row('ts'), event }))
              )
              .run()) as unknown[]
            for (const event of events) process.stderr.write(`logged: ${JSON.stringify(event)}\n`)
          }
          process.stderr.write(
            `live oracle on RethinkDB: ${twice.length} write events logged twice ${JSON.stringify(twice)}, ${superseded} superseded\n`
          )
          await a.stop()
          await b.stop()
          await instances.cleanup()
          await server!.stop()
        }
      }
    }
  })
})
