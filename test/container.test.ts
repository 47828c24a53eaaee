import { describe, expect, it } from '@jest/globals'
import { App } from '../src/application/app.js'
import { LoginThrottle } from '../src/application/sessions/login-throttle.js'
import { Sessions } from '../src/application/sessions/sessions.js'
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
import { buildContainer } from '../src/container.js'
import { modules, type RegisteredModule } from '../src/modules/index.js'
import { services } from '../src/services/registry.js'
import { ConfigError, loadConfig } from '../src/infrastructure/config/config.js'
import { InMemoryConnectionSessions } from '../src/infrastructure/memory/in-memory-connection-sessions.js'
import { InMemoryEventHistory } from '../src/infrastructure/store-commons/history/index.js'
import { InMemoryLoginAttempts } from '../src/infrastructure/memory/in-memory-login-attempts.js'
import { InMemorySessionStore } from '../src/infrastructure/memory/in-memory-session-store.js'
import { InMemoryStore } from '../src/infrastructure/memory/in-memory-store.js'
import { InMemoryStoreFactory } from '../src/infrastructure/memory/in-memory-store-factory.js'
import { InMemoryUniqueKeys } from '../src/infrastructure/memory/in-memory-unique-keys.js'
import { FakeClock } from './support/fake-clock.js'

/** The registry's services (src/services/index.ts), in the order the app registers them. */
const servicePaths = Object.keys(services)

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
  it('binds the in-memory adapters by default, each once per container', async () => {
    const container = await buildContainer(config({}), { logger: silentLogger })
    expect(container.get(StoreFactory)).toBeInstanceOf(InMemoryStoreFactory)
    expect(container.get(UniqueKeys)).toBeInstanceOf(InMemoryUniqueKeys)
    expect(container.get(SessionStore)).toBeInstanceOf(InMemorySessionStore)
    expect(container.get(LoginAttempts)).toBeInstanceOf(InMemoryLoginAttempts)
    expect(container.get(StoreFactory)).toBe(container.get(StoreFactory))
    expect(container.get<App>(App).paths).toEqual(expect.arrayContaining([...servicePaths, 'authentication']))
    expect(container.get<App>(App)).toBe(container.get<App>(App))
    // Modules are shared between containers; what they bind is not.
    expect((await buildContainer(config({}), { logger: silentLogger })).get(StoreFactory)).not.toBe(
      container.get(StoreFactory)
    )
  })

  it('swaps in another store module by configuration alone, keeping what it does not bind in process', async () => {
    const fake = new FakeStoreFactory()
    const fakeModule: RegisteredModule = {
      store: 'fake',
      on: (settings) => settings.store === 'fake',
      load: async () => ({
        module: { bind: (container) => void container.bind<StoreFactory>(StoreFactory).toConstantValue(fake) }
      })
    }
    const logger = recordingLogger()
    const container = await buildContainer(config({ STORE: 'fake' }), {
      logger,
      modules: { ...modules, fake: fakeModule }
    })
    const app = container.get<App>(App)
    // Each service opens its collection (named after its path unless it chose another) on the bound store.
    expect(fake.created.size).toBe(servicePaths.length)
    const user = (await app.service('users').create!({ email: 'ann@example.com', password: 'secret-pw' })) as Data
    expect(
      await fake.created.get('users')!.get(user.id as number, { filter: { op: 'and', filters: [] }, sort: [], skip: 0 })
    ).toMatchObject({ email: 'ann@example.com' })
    expect(container.get(UniqueKeys)).toBeInstanceOf(InMemoryUniqueKeys)
    expect(container.get(SessionStore)).toBeInstanceOf(InMemorySessionStore)
    expect(container.get(EventHistory)).toBeInstanceOf(InMemoryEventHistory)
    expect(container.get(ConnectionSessions)).toBeInstanceOf(InMemoryConnectionSessions)
    expect(logger.warnings).toEqual([
      'No connection recovery adapter is registered for STORE=fake: a dropped socket connection resumes only on the instance it was connected to',
      'No session adapter is registered for STORE=fake: sessions and login limits are kept in this process only',
      'No unique keys adapter is registered for STORE=fake: unique fields are enforced in this process only'
    ])
  })

  it('refuses a STORE that no module is registered for, naming the ones that are (from the registry)', async () => {
    const stores = ['memory', ...Object.values(modules).flatMap((entry) => (entry.store ? [entry.store] : []))]
    for (const store of ['nope', 'toString']) {
      const refuse = buildContainer(config({ STORE: store }), { logger: silentLogger })
      await expect(refuse).rejects.toThrow(
        new ConfigError(`STORE must be one of ${stores.join(', ')} (got '${store}')`)
      )
    }
    await expect(buildContainer(config({ STORE: 'fake' }), { logger: silentLogger, modules: {} })).rejects.toThrow(
      new ConfigError("STORE must be one of memory (got 'fake')")
    )
  })

  it('refuses an HTTP engine or real-time transport that neither the core nor a module provides', async () => {
    const named = (kind: 'http' | 'realtime') => Object.values(modules).flatMap((entry) => entry[kind] ?? [])
    await expect(buildContainer(config({ HTTP: 'koa' }), { logger: silentLogger })).rejects.toThrow(
      new ConfigError(`HTTP must be one of ${['express', ...named('http')].join(', ')} (got 'koa')`)
    )
    await expect(buildContainer(config({ REALTIME: 'ws' }), { logger: silentLogger })).rejects.toThrow(
      new ConfigError(`REALTIME must be one of ${['socketio', 'none', ...named('realtime')].join(', ')} (got 'ws')`)
    )
  })

  it('loads only the modules configuration selects, each through its registry line', async () => {
    const loaded: string[] = []
    const spy = Object.fromEntries(
      Object.entries(modules).map(([name, entry]) => [
        name,
        { ...entry, load: () => (loaded.push(name), entry.load()) } satisfies RegisteredModule
      ])
    )
    const container = await buildContainer(
      config({
        METRICS: 'false',
        API_DOCS: 'false',
        SOCKET_RECOVERY_WINDOW: '0',
        SESSIONS: 'false',
        LIVE_QUERIES: 'false',
        IDEMPOTENCY: 'false'
      }),
      { logger: silentLogger, modules: spy }
    )
    // Rules are on whenever their module is there: the app's definitions apply (src/modules/rules.ts).
    expect(loaded).toEqual(['rules'])
    expect(container.get<App>(App).paths).toEqual([...servicePaths, 'authentication'])
    loaded.length = 0
    await buildContainer(config({}), { logger: silentLogger, modules: spy })
    expect(loaded.sort()).toEqual(['apiDocs', 'idempotency', 'liveQueries', 'metrics', 'recovery', 'rules', 'sessions'])
  })

  it('builds the adapters and the application pieces from the core settings', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1))
    const container = await buildContainer(
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

  it('gives two containers the sessions and login counters passed to both, as instances of one app', async () => {
    const sessions = new InMemorySessionStore()
    const attempts = new InMemoryLoginAttempts()
    const [a, b] = await Promise.all(
      [0, 1].map(() =>
        buildContainer(config({}), {
          logger: silentLogger,
          rebind: (container) => {
            container.rebind<SessionStore>(SessionStore).toConstantValue(sessions)
            container.rebind<LoginAttempts>(LoginAttempts).toConstantValue(attempts)
          }
        })
      )
    )
    for (const container of [a!, b!]) {
      expect(container.get(Sessions).store).toBe(sessions)
      expect(container.get(LoginAttempts)).toBe(attempts)
    }
  })

  it('warns once that tokens die with the process when AUTH_SECRET is not set', async () => {
    const logger = recordingLogger()
    const container = await buildContainer(loadConfig({ NODE_ENV: 'test', BCRYPT_ROUNDS: '4' }), { logger })
    container.get<App>(App)
    await container.get<TokenService>(TokenService).sign({}, { subject: '1' })
    expect(logger.warnings).toEqual([
      'AUTH_SECRET is not set: using a random secret for this run, so access tokens stop working after a restart'
    ])
  })
})
