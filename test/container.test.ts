import { describe, expect, it } from '@jest/globals'
import { ContainerModule } from 'inversify'
import { App } from '../src/application/app.js'
import { LoginThrottle } from '../src/application/authentication/login-throttle.js'
import { Sessions } from '../src/application/authentication/sessions.js'
import { LoginAttempts } from '../src/domain/auth/login-attempts.js'
import { PasswordHasher } from '../src/domain/auth/password-hasher.js'
import { SessionStore } from '../src/domain/auth/session-store.js'
import { TokenService } from '../src/domain/auth/token-service.js'
import { Clock } from '../src/domain/clock.js'
import { Logger, silentLogger } from '../src/domain/logger.js'
import { ConnectionSessions } from '../src/domain/realtime/connection-sessions.js'
import { EventHistory } from '../src/domain/realtime/event-history.js'
import type { Data } from '../src/domain/service/service.js'
import type { Store } from '../src/domain/store/store.js'
import { StoreFactory } from '../src/domain/store/store-factory.js'
import { UniqueKeys } from '../src/domain/unique-keys.js'
import { buildContainer, storeModules } from '../src/container.js'
import { ConfigError, loadConfig } from '../src/infrastructure/config/config.js'
import type { StoreModule } from '../src/infrastructure/config/store-module.js'
import { InMemoryConnectionSessions } from '../src/infrastructure/memory/in-memory-connection-sessions.js'
import { InMemoryEventHistory } from '../src/infrastructure/store-commons/index.js'
import { InMemoryLoginAttempts } from '../src/infrastructure/memory/in-memory-login-attempts.js'
import { InMemorySessionStore } from '../src/infrastructure/memory/in-memory-session-store.js'
import { InMemoryStore } from '../src/infrastructure/memory/in-memory-store.js'
import { InMemoryStoreFactory } from '../src/infrastructure/memory/in-memory-store-factory.js'
import { InMemoryUniqueKeys } from '../src/infrastructure/memory/in-memory-unique-keys.js'
import { PostgresConnectionSessions } from '../src/infrastructure/postgres/postgres-connection-sessions.js'
import { PostgresEventHistory } from '../src/infrastructure/postgres/postgres-event-history.js'
import { PostgresLoginAttempts } from '../src/infrastructure/postgres/postgres-login-attempts.js'
import { PostgresSessionStore } from '../src/infrastructure/postgres/postgres-session-store.js'
import { PostgresSettings } from '../src/infrastructure/postgres/postgres-settings.js'
import { PostgresStoreFactory } from '../src/infrastructure/postgres/postgres-store-factory.js'
import { PostgresUniqueKeys } from '../src/infrastructure/postgres/postgres-unique-keys.js'
import { RethinkDbConnectionSessions } from '../src/infrastructure/rethinkdb/rethinkdb-connection-sessions.js'
import { RethinkDbEventHistory } from '../src/infrastructure/rethinkdb/rethinkdb-event-history.js'
import { RethinkDbLoginAttempts } from '../src/infrastructure/rethinkdb/rethinkdb-login-attempts.js'
import { RethinkDbSessionStore } from '../src/infrastructure/rethinkdb/rethinkdb-session-store.js'
import { RethinkDbSettings } from '../src/infrastructure/rethinkdb/rethinkdb-settings.js'
import { RethinkDbStoreFactory } from '../src/infrastructure/rethinkdb/rethinkdb-store-factory.js'
import { RethinkDbUniqueKeys } from '../src/infrastructure/rethinkdb/rethinkdb-unique-keys.js'
import { FakeClock } from './support/fake-clock.js'

/** A second store adapter: every collection it creates is recorded, so the test can see it was used. */
class FakeStoreFactory implements StoreFactory {
  readonly created = new Map<string, Store>()
  create<T extends Data = Data>(name: string): Store<T> {
    const store = new InMemoryStore()
    this.created.set(name, store)
    return store as unknown as Store<T>
  }
  async health() {
    return { ready: true, checks: { reachable: true }, problems: [] }
  }
  async close() {}
}

const config = (env: Record<string, string>) =>
  loadConfig({ NODE_ENV: 'test', AUTH_SECRET: 'a-test-secret-of-some-length', BCRYPT_ROUNDS: '4', ...env })

/** A logger that keeps the warnings. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return {
    warnings,
    debug() {},
    info() {},
    error() {},
    warn: (message) => {
      warnings.push(message)
    }
  }
}

describe('composition root', () => {
  it('binds the in-memory adapters by default, each once per container', () => {
    const container = buildContainer(config({}), { logger: silentLogger })
    expect(container.get(StoreFactory)).toBeInstanceOf(InMemoryStoreFactory)
    expect(container.get(UniqueKeys)).toBeInstanceOf(InMemoryUniqueKeys)
    expect(container.get(SessionStore)).toBeInstanceOf(InMemorySessionStore)
    expect(container.get(LoginAttempts)).toBeInstanceOf(InMemoryLoginAttempts)
    expect(container.get(StoreFactory)).toBe(container.get(StoreFactory))
    expect(container.get<App>(App).paths).toEqual(expect.arrayContaining(['messages', 'users', 'authentication']))
    expect(container.get<App>(App)).toBe(container.get<App>(App))
    // Modules are shared between containers; what they bind is not.
    expect(buildContainer(config({}), { logger: silentLogger }).get(StoreFactory)).not.toBe(container.get(StoreFactory))
  })

  it('binds the RethinkDB adapters for STORE=rethinkdb, with the settings its module read', async () => {
    const container = buildContainer(config({ STORE: 'rethinkdb' }), {
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
    expect(container.get<App>(App).paths).toEqual(expect.arrayContaining(['messages', 'users', 'authentication']))
    await stores.close()
  })

  it('binds the PostgreSQL adapters for STORE=postgres, with the settings its module read, before connecting', async () => {
    const container = buildContainer(config({ STORE: 'postgres' }), {
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
    expect(container.get<App>(App).paths).toEqual(expect.arrayContaining(['messages', 'users', 'authentication']))
    // Nothing listens on port 1: the probe says so without the password.
    const health = await stores.health()
    expect(health.ready).toBe(false)
    expect(JSON.stringify(health)).not.toContain('hunter2')
    await stores.close()
  })

  it('reads the settings of the chosen store only, and refuses bad ones in one line', () => {
    const env = { RETHINKDB_URL: 'postgres://db/chat' }
    expect(buildContainer(config({}), { logger: silentLogger, env }).get(StoreFactory)).toBeInstanceOf(
      InMemoryStoreFactory
    )
    const refuse = () => buildContainer(config({ STORE: 'rethinkdb' }), { logger: silentLogger, env })
    expect(refuse).toThrow(ConfigError)
    expect(refuse).toThrow(
      new ConfigError(
        "RETHINKDB_URL must look like rethinkdb://[user:password@]host:28015/db, or rethinkdb://host1:28015,host2:28015/db for a cluster (got 'postgres://db/chat')"
      )
    )
  })

  it('swaps in another store module by configuration alone, keeping what it does not bind in process', async () => {
    const fake = new FakeStoreFactory()
    const fakeModule: StoreModule = () =>
      new ContainerModule(({ bind }) => {
        bind<StoreFactory>(StoreFactory).toConstantValue(fake)
      })
    const logger = recordingLogger()
    const container = buildContainer(config({ STORE: 'fake' }), {
      logger,
      storeModules: { ...storeModules, fake: fakeModule }
    })
    const app = container.get<App>(App)
    expect([...fake.created.keys()]).toEqual(['messages', 'users'])
    const user = (await app.service('users').create!({ email: 'ann@example.com', password: 'secret-pw' })) as Data
    expect(
      await fake.created.get('users')!.get(user.id as number, { filter: { op: 'and', filters: [] }, sort: [], skip: 0 })
    ).toMatchObject({ email: 'ann@example.com' })
    expect(container.get(UniqueKeys)).toBeInstanceOf(InMemoryUniqueKeys)
    expect(container.get(SessionStore)).toBeInstanceOf(InMemorySessionStore)
    expect(container.get(EventHistory)).toBeInstanceOf(InMemoryEventHistory)
    expect(container.get(ConnectionSessions)).toBeInstanceOf(InMemoryConnectionSessions)
    expect(logger.warnings).toEqual([
      'No unique keys adapter is registered for STORE=fake: unique fields are enforced in this process only',
      'No connection recovery adapter is registered for STORE=fake: a dropped socket connection resumes only on the instance it was connected to',
      'No session adapter is registered for STORE=fake: sessions and login limits are kept in this process only'
    ])
  })

  it('refuses a STORE that no module is registered for, naming the ones that are', () => {
    for (const store of ['nope', 'toString']) {
      const refuse = () => buildContainer(config({ STORE: store }), { logger: silentLogger })
      expect(refuse).toThrow(ConfigError)
      expect(refuse).toThrow(new ConfigError(`STORE must be one of memory, rethinkdb, postgres (got '${store}')`))
    }
    expect(() =>
      buildContainer(config({ STORE: 'memory' }), {
        logger: silentLogger,
        storeModules: { fake: storeModules.memory! }
      })
    ).toThrow(new ConfigError("STORE must be one of fake (got 'memory')"))
  })

  it('builds the adapters and the application pieces from the core settings', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1))
    const container = buildContainer(
      config({
        JWT_EXPIRES_IN: '2h',
        REFRESH_TOKEN_EXPIRES_IN: '7d',
        LOGIN_MAX_FAILURES: '3',
        LOGIN_FAILURE_WINDOW: '1h'
      }),
      { logger: silentLogger, clock }
    )
    expect(await container.get<PasswordHasher>(PasswordHasher).hash('secret-pw')).toMatch(/^\$2b\$04\$/)
    const token = await container.get<TokenService>(TokenService).sign({}, { subject: '1' })
    expect(await container.get<TokenService>(TokenService).verify(token)).toMatchObject({
      iat: clock.now() / 1000,
      exp: clock.now() / 1000 + 7200
    })
    expect(container.get(Sessions)).toMatchObject({ accessTokenTtl: 2 * 3_600_000, refreshTokenTtl: 7 * 86_400_000 })
    expect(container.get(Sessions).store).toBe(container.get(SessionStore))
    expect(container.get(LoginThrottle)).toMatchObject({ maxFailures: 3, window: 3_600_000 })
    expect(container.get<Clock>(Clock)).toBe(clock)
  })

  it('gives two containers the sessions and login counters passed to both, as instances of one app', () => {
    const sessions = new InMemorySessionStore()
    const attempts = new InMemoryLoginAttempts()
    const [a, b] = [0, 1].map(() => buildContainer(config({}), { logger: silentLogger, sessions, attempts }))
    for (const container of [a!, b!]) {
      expect(container.get(Sessions).store).toBe(sessions)
      expect(container.get(LoginAttempts)).toBe(attempts)
    }
  })

  it('warns once that tokens die with the process when AUTH_SECRET is not set', async () => {
    const logger = recordingLogger()
    const container = buildContainer(loadConfig({ NODE_ENV: 'test', BCRYPT_ROUNDS: '4' }), { logger })
    container.get<App>(App)
    await container.get<TokenService>(TokenService).sign({}, { subject: '1' })
    expect(logger.warnings).toEqual([
      'AUTH_SECRET is not set: using a random secret for this run, so access tokens stop working after a restart'
    ])
  })
})
