import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { beyond, keysetSort } from '../../../src/domain/query/cursor.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { StoreQuery } from '../../../src/domain/query/ast.js'
import type { JsonSchemaObject } from '../../../src/domain/schema/json-schema.js'
import { LIMITED_READ, RethinkDbStore } from '../../../src/infrastructure/rethinkdb/rethinkdb-store.js'
import { discoverRethinkDb } from '../../support/rethinkdb-server.js'

// A page read in index order takes one round of reads from the table's hash shards wherever it
// starts, so that a cursor page costs what page 1 does (BENCHMARKS.md, cursor pagination). The
// server's profile counts the rounds: each is one sample of its "Slicing eagerly" step.
const server = await discoverRethinkDb()
const withServer = server ? describe : describe.skip

afterAll(async () => {
  await server?.stop()
})

const schema: JsonSchemaObject = {
  type: 'object',
  required: ['id', 'score'],
  properties: { id: { type: 'integer' }, score: { type: 'number' } }
}

withServer('RethinkDB pages read in index order', () => {
  let store: RethinkDbStore
  const records = Array.from({ length: 4000 }, (_, id) => ({ id, score: ((id * 7919) % 1000) / 10 }))

  beforeAll(async () => {
    store = new RethinkDbStore({
      r: server!.r,
      db: server!.db,
      table: 'page_rounds',
      watch: false,
      schema,
      indexes: [{ fields: ['score', 'id'] }]
    })
    await store.init()
    await store.table().insert(records).run()
  })
  afterAll(async () => {
    await store?.close()
  })

  /** The rounds of shard reads the store's read of `query` takes. */
  async function rounds(query: StoreQuery): Promise<number> {
    const { profile } = (await store.findQuery(query).run({ ...LIMITED_READ, profile: true })) as unknown as {
      profile: { description?: string; n_samples?: number }[]
    }
    return profile
      .filter((step) => step.description?.startsWith('Slicing'))
      .reduce((sum, step) => sum + (step.n_samples ?? 1), 0)
  }

  it('takes one round for page 1 and for a cursor page anywhere, in both directions', async () => {
    for (const order of [{ score: 1 }, { score: -1, id: -1 }]) {
      const query = parseQuery({ $sort: order, $limit: 26 })
      const sort = keysetSort(query.sort, 'id')
      const sorted = [...records].sort((a, b) =>
        sort.reduce((result, [field, way]) => result || way * (a[field as 'id'] - b[field as 'id']), 0)
      )
      expect(await rounds({ ...query, sort })).toBe(1)
      for (let at = 25; at < records.length; at += 150) {
        const position = [sorted[at]!.score, sorted[at]!.id]
        expect(await rounds({ ...query, sort, filter: beyond(position, sort, true, 'id') })).toBe(1)
      }
    }
  })
})
