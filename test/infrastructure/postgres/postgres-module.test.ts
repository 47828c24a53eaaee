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
import { loadConfig } from '../../../src/infrastructure/config/config.js'
import { PostgresConnectionSessions } from '../../../src/infrastructure/postgres/postgres-connection-sessions.js'
import { PostgresEventHistory } from '../../../src/infrastructure/postgres/postgres-event-history.js'
import { PostgresLoginAttempts } from '../../../src/infrastructure/postgres/postgres-login-attempts.js'
import { PostgresSessionStore } from '../../../src/infrastructure/postgres/postgres-session-store.js'
import { PostgresSettings } from '../../../src/infrastructure/postgres/postgres-settings.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { PostgresUniqueKeys } from '../../../src/infrastructure/postgres/postgres-unique-keys.js'
import { services } from '../../../src/services/registry.js'

const config = (env: Record<string, string>) =>
  loadConfig({ NODE_ENV: 'test', AUTH_SECRET: 'a-test-secret-of-some-length', BCRYPT_ROUNDS: '4', ...env })

/** The PostgreSQL module as the composition root loads it for STORE=postgres (src/modules/postgres.ts). */
describe('the PostgreSQL module', () => {
  it('binds the PostgreSQL adapters for STORE=postgres, with the settings its module read, before connecting', async () => {
    const container = await buildContainer(config({ STORE: 'postgres' }), {
      logger: silentLogger,
      env: { POSTGRES_URL: 'postgres://app:hunter2@127.0.0.1:1/chat', POSTGRES_TIMEOUT: '5' }
    })
    expect(container.get<PostgresSettings>(PostgresSettings)).toEqual({
      url: 'postgres://app:hunter2@127.0.0.1:1/chat',
      poolSize: 10,
      timeoutMs: 5000
    })
    const stores = container.get<StoreFactory>(StoreFactory)
    expect(stores).toBeInstanceOf(PostgresStoreFactory)
    expect(container.get(UniqueKeys)).toBeInstanceOf(PostgresUniqueKeys)
    expect(container.get(SessionStore)).toBeInstanceOf(PostgresSessionStore)
    expect(container.get(LoginAttempts)).toBeInstanceOf(PostgresLoginAttempts)
    expect(container.get(EventHistory)).toBeInstanceOf(PostgresEventHistory)
    expect(container.get(ConnectionSessions)).toBeInstanceOf(PostgresConnectionSessions)
    expect(container.get<App>(App).paths).toEqual(expect.arrayContaining([...Object.keys(services), 'authentication']))
    // Nothing listens on port 1: the probe says so without the password.
    const health = await stores.health()
    expect(health.ready).toBe(false)
    expect(JSON.stringify(health)).not.toContain('hunter2')
    await stores.close()
  })
})
