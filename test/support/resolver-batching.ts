import { expect } from '@jest/globals'
import type { App } from '../../src/application/app.js'
import type { Data } from '../../src/domain/service/service.js'
import type { Store } from '../../src/domain/store/store.js'
import type { StoreFactory } from '../../src/domain/store/store-factory.js'
import type { ReferenceServices } from '../../src/reference-app.js'

const READS = new Set(['find', 'page', 'count', 'get'])

/** A StoreFactory whose stores count the reads (find, page, count, get) each collection answers. */
export function countingStores(inner: StoreFactory): { stores: StoreFactory; reads: (name: string) => number } {
  const counts = new Map<string, number>()
  const stores: StoreFactory = {
    create<T extends Data>(name: string, options?: Parameters<StoreFactory['create']>[1]): Store<T> {
      const store = inner.create<T>(name, options)
      return new Proxy(store, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver) as unknown
          if (typeof property !== 'string' || typeof value !== 'function') return value
          if (!READS.has(property)) return (value as (...args: unknown[]) => unknown).bind(target)
          return (...args: unknown[]) => {
            counts.set(name, (counts.get(name) ?? 0) + 1)
            return (value as (...args: unknown[]) => unknown).apply(target, args)
          }
        }
      })
    },
    close: () => inner.close(),
    health: () => inner.health()
  }
  return { stores, reads: (name) => counts.get(name) ?? 0 }
}

/** Five users and 25 messages, five each, written by internal calls (the author set as the server would). */
export async function seedChat(app: App<ReferenceServices>): Promise<{ ids: (string | number)[] }> {
  const ids: (string | number)[] = []
  for (let n = 0; n < 5; n++) {
    const user = (await app
      .service('users')
      .create({ email: `Author${n}@Example.com`, password: `password-${n}` })) as {
      id: string | number
    }
    ids.push(user.id)
  }
  for (let n = 0; n < 25; n++)
    await app.service('messages').create({ text: `message ${n}`, userId: ids[n % 5] } as never)
  return { ids }
}

/**
 * A find of the 25 messages, externally and internally: every message carries its author (without the password,
 * with the Gravatar set at signup), and each find reads the users' store once — Feathers' `users.get` per message
 * would read it 25 times.
 */
export async function expectOneUsersReadPerFind(
  app: App<ReferenceServices>,
  reads: (name: string) => number
): Promise<void> {
  for (const params of [{ provider: 'rest' }, {}]) {
    const before = reads('users')
    const page = (await app.service('messages').find({ ...params, query: { $limit: 25 } })) as {
      data: { userId?: unknown; user?: Record<string, unknown> }[]
    }
    expect(reads('users') - before).toBe(1)
    expect(page.data).toHaveLength(25)
    for (const message of page.data) {
      expect(message.user).toBeDefined()
      expect(String(message.user!.id)).toBe(String(message.userId))
      expect(message.user!.email).toMatch(/^Author\d@Example\.com$/)
      expect(message.user!.avatar).toMatch(/^https:\/\/s\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=60$/)
      expect(message.user).not.toHaveProperty('password')
    }
  }
}
