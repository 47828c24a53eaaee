import { describe, expect, it } from '@jest/globals'
import { App } from '../../../src/application/app.js'
import { uniqueField } from '../../../src/application/schema/unique-field.js'
import { BadRequest, Unavailable } from '../../../src/domain/errors/errors.js'
import type { Data } from '../../../src/domain/service/service.js'
import { InMemoryUniqueKeys } from '../../../src/infrastructure/memory/in-memory-unique-keys.js'

/** `people` whose first `failures` finds throw `error`, then answer `records`. */
function appWithFlakyFind(keys: InMemoryUniqueKeys, records: Data[], failures: number, error: () => Error) {
  let finds = 0
  const people = {
    id: 'id',
    async find(): Promise<Data[]> {
      finds++
      if (finds <= failures) throw error()
      return records
    },
    async get(id: unknown): Promise<Data> {
      return records.find((record) => record.id === id)!
    }
  }
  const app = new App()
  const email = uniqueField('email', { keys })
  app.use('people', people)
  app.service('people').hooks({ before: { create: [email.before] } })
  return { app, finds: () => finds }
}

describe("uniqueField's back-fill at startup", () => {
  it('tries again while the database answers 503 (a table still being repaired), then claims every key', async () => {
    const keys = new InMemoryUniqueKeys()
    const records = [
      { id: 1, email: 'ann@example.com' },
      { id: 2, email: 'bob@example.com' }
    ]
    const { app, finds } = appWithFlakyFind(keys, records, 2, () => new Unavailable('The database is unavailable'))
    await app.setup()
    expect(finds()).toBe(3)
    expect(await keys.claim('people.email', 'ann@example.com')).toBe(false)
    expect(await keys.claim('people.email', 'bob@example.com')).toBe(false)
  })

  it('stops the start at once on any other error', async () => {
    const keys = new InMemoryUniqueKeys()
    const { app, finds } = appWithFlakyFind(keys, [], 1, () => new BadRequest('no'))
    await expect(app.setup()).rejects.toBeInstanceOf(BadRequest)
    expect(finds()).toBe(1)
  })
})
