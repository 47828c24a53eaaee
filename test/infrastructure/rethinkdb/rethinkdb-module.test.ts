import { describe, expect, it } from '@jest/globals'
import { App } from '../../../src/application/app.js'
import { LoginAttempts } from '../../../src/domain/auth/login-attempts.js'
import { SessionStore } from '../../../src/domain/auth/session-store.js'
import { silentLogger } from '../../../src/domain/logger.js'
import { ConnectionSessions } from '../../../src/domain/realtime/connection-sessions.js'
import { EventHistory } from '../../../src/domain/realtime/event-history.js'
import { StoreFactory } from '../../../src/domain/store/store-factory.js'
import { UniqueKeys } from '../../../src/domain/unique-keys.js'
import { buildContainer } from '../../../src/container.js'
import { ConfigError, loadConfig } from '../../../src/infrastructure/config/config.js'
import { InMemoryStoreFactory } from '../../../src/infrastructure/memory/in-memory-store-factory.js'
import { RethinkDbConnectionSessions } from '../../../src/infrastructure/rethinkdb/rethinkdb-connection-sessions.js'
import { RethinkDbEventHistory } from '../../../src/infrastructure/rethinkdb/rethinkdb-event-history.js'
import { RethinkDbLoginAttempts } from '../../../src/infrastructure/rethinkdb/rethinkdb-login-attempts.js'
import { RethinkDbSessionStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-session-store.js'
import { RethinkDbSettings } from '../../../src/infrastructure/rethinkdb/rethinkdb-settings.js'
import { RethinkDbStoreFactory } from '../../../src/infrastructure/rethinkdb/rethinkdb-store-factory.js'
import { RethinkDbUniqueKeys } from '../../../src/infrastructure/rethinkdb/rethinkdb-unique-keys.js'
import { services } from '../../../src/services/registry.js'

const config = (env: Record<string, string>) =>
  loadConfig({ NODE_ENV: 'test', AUTH_SECRET: 'a-test-secret-of-some-length', BCRYPT_ROUNDS: '4', ...env })

/** The RethinkDB module as the composition root loads it for STORE=rethinkdb (src/modules/rethinkdb.ts). */
describe('the RethinkDB module', () => {
  it('binds the RethinkDB adapters for STORE=rethinkdb, with the settings its module read', async () => {
    const container = await buildContainer(config({ STORE: 'rethinkdb' }), {
      logger: silentLogger,
      env: { RETHINKDB_URL: 'rethinkdb://127.0.0.1:1/chat', RETHINKDB_TIMEOUT: '5', RETHINKDB_DIRECT_WRITES: 'off' }
    })
    expect(container.get<RethinkDbSettings>(RethinkDbSettings)).toEqual({
      url: 'rethinkdb://127.0.0.1:1/chat',
      db: 'chat',
      timeoutMs: 5000,
      directWrites: false
    })
    const stores = container.get<StoreFactory>(StoreFactory)
    expect(stores).toBeInstanceOf(RethinkDbStoreFactory)
    expect(container.get(UniqueKeys)).toBeInstanceOf(RethinkDbUniqueKeys)
    expect(container.get(SessionStore)).toBeInstanceOf(RethinkDbSessionStore)
    expect(container.get(LoginAttempts)).toBeInstanceOf(RethinkDbLoginAttempts)
    // Connection recovery on any instance: the history over the event log, sessions beside it.
    expect(container.get(EventHistory)).toBeInstanceOf(RethinkDbEventHistory)
    expect(container.get(ConnectionSessions)).toBeInstanceOf(RethinkDbConnectionSessions)
    expect(container.get<App>(App).paths).toEqual(expect.arrayContaining([...Object.keys(services), 'authentication']))
    await stores.close()
  })

  it('reads its settings only when chosen, and refuses bad ones in one line', async () => {
    const env = { RETHINKDB_URL: 'postgres://db/chat' }
    expect((await buildContainer(config({}), { logger: silentLogger, env })).get(StoreFactory)).toBeInstanceOf(
      InMemoryStoreFactory
    )
    const refuse = () => buildContainer(config({ STORE: 'rethinkdb' }), { logger: silentLogger, env })
    await expect(refuse()).rejects.toThrow(ConfigError)
    await expect(refuse()).rejects.toThrow(
      new ConfigError(
        "RETHINKDB_URL must look like rethinkdb://[user:password@]host:28015/db, or rethinkdb://host1:28015,host2:28015/db for a cluster (got 'postgres://db/chat')"
      )
    )
  })
})
