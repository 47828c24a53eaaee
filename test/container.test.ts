import { afterEach, describe, expect, it } from '@jest/globals'
import { App } from '../src/application/app.js'
import { silentLogger } from '../src/domain/logger.js'
import type { Data } from '../src/domain/service/service.js'
import type { Store } from '../src/domain/store/store.js'
import { StoreFactory } from '../src/domain/store/store-factory.js'
import { buildContainer, storeAdapters } from '../src/container.js'
import { loadConfig } from '../src/infrastructure/config/config.js'
import { InMemoryStore } from '../src/infrastructure/memory/in-memory-store.js'
import { InMemoryStoreFactory } from '../src/infrastructure/memory/in-memory-store-factory.js'
import { RethinkDbStoreFactory } from '../src/infrastructure/rethinkdb/rethinkdb-store-factory.js'

/** A second store adapter: every collection it creates is recorded, so the test can see it was used. */
class FakeStoreFactory implements StoreFactory {
  readonly created = new Map<string, Store>()
  create<T extends Data = Data>(name: string): Store<T> {
    const store = new InMemoryStore()
    this.created.set(name, store)
    return store as unknown as Store<T>
  }
  async health() { return { ready: true, checks: { reachable: true }, problems: [] } }
  async close() {}
}

const config = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', AUTH_SECRET: 'a-test-secret-of-some-length', BCRYPT_ROUNDS: '4', ...env })

describe('composition root', () => {
  const registered = { ...storeAdapters }
  afterEach(() => {
    for (const name of Object.keys(storeAdapters)) if (!(name in registered)) delete storeAdapters[name]
  })

  it('binds the in-memory store by default', () => {
    const container = buildContainer(config({}), { logger: silentLogger })
    expect(container.get(StoreFactory)).toBeInstanceOf(InMemoryStoreFactory)
    expect(container.get<App>(App).paths).toEqual(expect.arrayContaining(['messages', 'users', 'authentication']))
  })

  it('binds the RethinkDB store for STORE=rethinkdb and nothing else changes', async () => {
    const container = buildContainer(config({ STORE: 'rethinkdb', RETHINKDB_URL: 'rethinkdb://127.0.0.1:1/plumage' }), { logger: silentLogger })
    const stores = container.get<StoreFactory>(StoreFactory)
    expect(stores).toBeInstanceOf(RethinkDbStoreFactory)
    expect(container.get<App>(App).paths).toEqual(expect.arrayContaining(['messages', 'users', 'authentication']))
    await stores.close()
  })

  it('swaps in another store adapter by configuration alone', async () => {
    const fake = new FakeStoreFactory()
    storeAdapters.fake = () => fake
    const container = buildContainer({ ...config({}), store: 'fake' as never }, { logger: silentLogger })
    const app = container.get<App>(App)
    expect([...fake.created.keys()]).toEqual(['messages', 'users'])
    const user = await app.service('users').create({ email: 'ann@example.com', password: 'secret-pw' }) as Data
    expect(await fake.created.get('users')!.get(user.id as number, { filter: { op: 'and', filters: [] }, sort: [], skip: 0 })).toMatchObject({ email: 'ann@example.com' })
  })

  it('refuses a STORE without a registered adapter with a clear message', () => {
    expect(() => buildContainer({ ...config({}), store: 'nope' as never }, { logger: silentLogger })).toThrow('No store adapter is registered for STORE=nope')
  })
})
