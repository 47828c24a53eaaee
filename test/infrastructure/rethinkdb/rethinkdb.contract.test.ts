import { Sessions } from '../../../src/application/sessions/sessions.js'
import { RethinkDbConnectionSessions } from '../../../src/infrastructure/rethinkdb/rethinkdb-connection-sessions.js'
import { RethinkDbLoginAttempts } from '../../../src/infrastructure/rethinkdb/rethinkdb-login-attempts.js'
import { RethinkDbSessionStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-session-store.js'
import { silentLogger } from '../../../src/domain/logger.js'
import { EventLog } from '../../../src/infrastructure/rethinkdb/event-log.js'
import { RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { RethinkDbUniqueKeys } from '../../../src/infrastructure/rethinkdb/rethinkdb-unique-keys.js'
import {
  runConnectionSessionsContract,
  runKeyedWritesContract,
  runLoginAttemptsContract,
  runSessionStoreContract,
  runStoreContract,
  runUniqueKeysContract
} from '../../../src/testing/index.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

// The RethinkDB adapters against the kit, every case, on a real server (RETHINKDB_URL, or Docker); without one
// they are skipped and the run says so in one loud line. Every store, and every case of the others, has tables
// of its own in the run's fresh database.
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip
let tables = 0

afterAll(async () => {
  await server?.stop()
})

withServer('on a real server', () => {
  runStoreContract({
    adapter: 'rethinkdb',
    cases: 'all',
    open: async ({ name, ...options }) => {
      const store = new RethinkDbStore({ r: server!.r, db: server!.db, table: name, ...options })
      await store.init()
      return { store, close: () => store.close() }
    }
  })
  // Idempotency keys: a name opened twice is two stores over one table, as two processes have (each with its own
  // event log, as each process has). With the log (the default) a keyed write commits in its log row; without it
  // (`watch: false`) in the key's row.
  for (const logged of [true, false]) {
    runKeyedWritesContract({
      adapter: logged ? 'rethinkdb' : 'rethinkdb without the event log',
      cases: 'all',
      open: async ({ name, watch, ...options }) => {
        const events =
          logged || watch ? new EventLog({ r: server!.r, db: server!.db, logger: silentLogger }) : undefined
        const store = new RethinkDbStore({
          r: server!.r,
          db: server!.db,
          // The two runs name their collections alike: tables apart.
          table: logged ? name : `${name}_unlogged`,
          ...options,
          ...(events ? { events, watch: true } : { watch: false })
        })
        await store.init()
        return { store, close: async () => (await store.close(), await events?.stop()) }
      }
    })
  }
  runUniqueKeysContract({
    adapter: 'rethinkdb',
    cases: 'all',
    open: (shared) =>
      new RethinkDbUniqueKeys({ r: server!.r, db: server!.db, table: `unique_keys_${shared ?? ++tables}` })
  })
  runSessionStoreContract({
    sessions: (store, clock, tokens) => new Sessions(store, tokens, clock),
    adapter: 'rethinkdb',
    cases: 'all',
    open: () =>
      new RethinkDbSessionStore({
        r: server!.r,
        db: server!.db,
        refreshTable: `refresh_${++tables}`,
        revocationTable: `revocations_${tables}`
      })
  })
  runLoginAttemptsContract({
    adapter: 'rethinkdb',
    cases: 'all',
    open: () => new RethinkDbLoginAttempts({ r: server!.r, db: server!.db, table: `attempts_${++tables}` })
  })
  runConnectionSessionsContract({
    adapter: 'rethinkdb',
    cases: 'all',
    open: ({ name, clock, windowMs }) =>
      new RethinkDbConnectionSessions({
        r: server!.r,
        db: server!.db,
        table: name,
        clock,
        windowMs,
        secret: 'a secret of at least sixteen characters'
      })
  })
})
