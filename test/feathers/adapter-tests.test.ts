import { afterAll, beforeAll } from '@jest/globals'
import { adapterTests, type AdapterTestName } from '@feathersjs/adapter-tests'
import { randomBytes } from 'node:crypto'
import { AdapterService } from '../../src/application/adapter-service.js'
import { App } from '../../src/application/app.js'
import * as errors from '../../src/domain/errors/errors.js'
import type { Store } from '../../src/domain/store/store.js'
import { InMemoryStore } from '../../src/infrastructure/memory/in-memory-store.js'
import { PostgresDatabase } from '../../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../../src/infrastructure/postgres/postgres-store-factory.js'
import { RethinkDbStore } from '../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { discoverPostgres } from '../support/postgres-server.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'

/*
 * Feathers' own adapter suite (@feathersjs/adapter-tests, unmodified) over AdapterService, on the
 * memory store, on RethinkDB and on PostgreSQL, the way Feathers runs it on its memory adapter: every named test, on
 * a `people` service (id `id`) and a `people-customid` service (id `customid`), reached through the
 * App's `service(path)` — hooks and all. The suite is written for mocha: jest has its describe/it and
 * hooks, under other names for the two that run once.
 */
Object.assign(globalThis, { before: beforeAll, after: afterAll })

/**
 * Every test the suite names (its `.id` test always runs): listing them all runs them all. A name the
 * suite does not know fails the type check; one left out would be skipped, and the suite lists those.
 */
const TEST_NAMES: readonly AdapterTestName[] = [
  '.options',
  '.events',
  '._get',
  '._find',
  '._create',
  '._update',
  '._patch',
  '._remove',
  '.get',
  '.get + $select',
  '.get + id + query',
  '.get + NotFound',
  '.get + NotFound (integer)',
  '.get + id + query id',
  '.find',
  '.remove',
  '.remove + $select',
  '.remove + id + query',
  '.remove + NotFound',
  '.remove + NotFound (integer)',
  '.remove + multi',
  '.remove + multi no pagination',
  '.remove + id + query id',
  '.update',
  '.update + $select',
  '.update + id + query',
  '.update + NotFound',
  '.update + NotFound (integer)',
  '.update + query + NotFound',
  '.update + id + query id',
  '.patch',
  '.patch + $select',
  '.patch + id + query',
  '.patch multiple',
  '.patch multiple no pagination',
  '.patch multi query same',
  '.patch multi query changed',
  '.patch + NotFound',
  '.patch + NotFound (integer)',
  '.patch + query + NotFound',
  '.patch + id + query id',
  '.create',
  '.create + $select',
  '.create multi',
  '.create ignores query',
  'internal .find',
  'internal .get',
  'internal .create',
  'internal .update',
  'internal .patch',
  'internal .remove',
  '.find + equal',
  '.find + equal multiple',
  '.find + $sort',
  '.find + $sort + string',
  '.find + $limit',
  '.find + $limit 0',
  '.find + $skip',
  '.find + $select',
  '.find + $or',
  '.find + $in',
  '.find + $nin',
  '.find + $lt',
  '.find + $lte',
  '.find + $gt',
  '.find + $gte',
  '.find + $ne',
  '.find + $gt + $lt + $sort',
  '.find + $or nested + $sort',
  '.find + $and',
  '.find + $and + $or',
  'params.adapter + paginate',
  'params.adapter + multi',
  '.find + paginate',
  '.find + paginate + query',
  '.find + paginate + $limit + $skip',
  '.find + paginate + $limit 0',
  '.find + paginate + params'
]

/** The two services Feathers tests an adapter with, over stores made by `storeFor(idField)`. */
function feathersApp(storeFor: (id: string) => Store): App {
  return new App()
    .use('people', new AdapterService(storeFor('id'), { events: ['testing'] }))
    .use('people-customid', new AdapterService(storeFor('customid'), { events: ['testing'] }))
}

function runSuite(app: App): void {
  adapterTests([...TEST_NAMES])(app, errors, 'people')
  adapterTests([...TEST_NAMES])(app, errors, 'people-customid', 'customid')
}

describe('memory store', () => {
  runSuite(feathersApp((id) => new InMemoryStore({ id })))
})

// Skipped with one loud line (from discoverRethinkDb) when no RethinkDB is reachable.
const server = await discoverRethinkDb()

if (server) {
  describe('RethinkDB store', () => {
    // Live stores, as the server runs them: every write also goes to the event log.
    const suffix = randomBytes(4).toString('hex')
    const app = feathersApp(
      (id) => new RethinkDbStore({ r: server.r, db: server.db, table: `people_${id}_${suffix}`, id })
    )
    beforeAll(() => app.setup())
    afterAll(async () => {
      await app.teardown()
      await server.stop()
    })
    runSuite(app)
  })
}

// Skipped with one loud line (from discoverPostgres) when PostgreSQL is neither given nor installed.
const database = await discoverPostgres()

if (database) {
  describe('PostgreSQL store', () => {
    // Live stores, as the server runs them: every write also goes to the database's event log.
    const factory = new PostgresStoreFactory(new PostgresDatabase({ url: database.url }))
    const app = feathersApp((id) => factory.create(`people_${id}`, { id }))
    beforeAll(() => app.setup())
    afterAll(async () => {
      await app.teardown()
      await factory.close()
      await database.stop()
    })
    runSuite(app)
  })
}
