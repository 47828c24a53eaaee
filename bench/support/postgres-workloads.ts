/**
 * The workloads of bench:postgres's first table (bench/postgres.ts) and of its instruction counts
 * (bench/postgres-instructions.ts): each read and write through PostgresStore on the `people` table
 * (bench/support/seed.ts's records, its schema, indexes on `city`, `age` and `[city, score]`) and as a
 * developer would write it by hand with `pg` on the same table.
 */
import type { Pool, QueryResult } from 'pg'
import type { StoreQuery } from '../../src/domain/query/ast.js'
import { parseQuery } from '../../src/domain/query/parse-query.js'
import type { StoreIndex } from '../../src/domain/store/store-factory.js'
import type { Store } from '../../src/domain/store/store.js'

export interface PostgresWorkload {
  name: string
  store: (store: Store) => Promise<unknown>
  hand: () => Promise<unknown>
  /** Whether both answered the same records (checked before measuring). */
  same?: (ours: unknown, theirs: unknown) => boolean
}

/** The `people` table's declared indexes: the hand-written queries use the expressions they index. */
export const peopleIndexes: StoreIndex[] = [{ fields: ['city'] }, { fields: ['age'] }, { fields: ['city', 'score'] }]

const q = (raw: Record<string, unknown>): StoreQuery => parseQuery(raw, { operators: ['$search', '$contains'] })

/** The workloads on `hand`'s `people` table; creates use ids from `firstId` on. */
export function postgresWorkloads(hand: Pool, firstId: number): PostgresWorkload[] {
  let next = firstId
  const rows = (result: QueryResult<{ doc: unknown }>) => result.rows.map((row) => row.doc)
  // The store is handed parsed queries, as a service hands them: parsing is the service's, the same on every store.
  const equality = q({ city: 'Berlin', $limit: 50 })
  const sorted = q({ city: { $in: ['Rome', 'Oslo'] }, age: { $gte: 30 }, $sort: { age: -1, name: 1 }, $limit: 10 })
  const paged = q({ city: 'Paris', $sort: { score: 1 }, $limit: 25 })
  const all = q({})
  // By hand as a developer who made these expression indexes would write it: the same expressions, so they serve.
  return [
    {
      name: 'find: equality, limit 50',
      store: (store) => store.find(equality),
      // Ordered by key, as the store orders every limited find so that its pages never overlap: the same 50 records.
      hand: async () =>
        rows(
          await hand.query(`SELECT doc FROM people WHERE doc -> 'city' = $1::jsonb ORDER BY key LIMIT 50`, ['"Berlin"'])
        ),
      same: (ours, theirs) => JSON.stringify(ours) === JSON.stringify(theirs)
    },
    {
      name: 'find: $in + $gte + 2-key sort + limit 10',
      store: (store) => store.find(sorted),
      hand: async () =>
        rows(
          await hand.query(
            `SELECT doc FROM people WHERE doc -> 'city' = ANY($1::jsonb[]) AND doc -> 'age' >= $2::jsonb
             ORDER BY doc -> 'age' DESC, doc ->> 'name' COLLATE "C", key LIMIT 10`,
            [['"Rome"', '"Oslo"'], '30']
          )
        ),
      same: (ours, theirs) => JSON.stringify(ours) === JSON.stringify(theirs)
    },
    {
      name: 'page: total + 25 sorted by score',
      store: (store) => store.page(paged),
      hand: async () => {
        const {
          rows: [page]
        } = await hand.query(
          `SELECT (SELECT count(*) FROM people WHERE doc -> 'city' = $1::jsonb) AS total,
             (SELECT json_agg(doc) FROM (SELECT doc FROM people WHERE doc -> 'city' = $1::jsonb
               ORDER BY doc -> 'score', key LIMIT 25) AS page) AS data`,
          ['"Paris"']
        )
        return { total: Number(page.total), data: page.data }
      },
      same: (ours, theirs) => JSON.stringify(ours) === JSON.stringify(theirs)
    },
    {
      name: 'get by id',
      store: (store) => store.get(4242, all),
      hand: async () => rows(await hand.query('SELECT doc FROM people WHERE key = $1', ['4242']))[0],
      same: (ours, theirs) => JSON.stringify(ours) === JSON.stringify(theirs)
    },
    {
      name: 'create one',
      store: (store) => store.create([{ id: next++, name: 'new', age: 1, city: 'Oslo', score: 0 }], {}),
      hand: async () => {
        const id = next++
        const doc = { id, name: 'new', age: 1, city: 'Oslo', score: 0 }
        return rows(
          await hand.query('INSERT INTO people (key, doc) VALUES ($1, $2::jsonb) RETURNING doc', [
            String(id),
            JSON.stringify(doc)
          ])
        )
      }
    },
    {
      name: 'patch by id',
      store: (store) => store.patch(17, { score: Math.random() }, all),
      hand: async () =>
        rows(
          await hand.query(`UPDATE people SET doc = doc || $2::jsonb WHERE key = $1 RETURNING doc`, [
            '17',
            JSON.stringify({ score: Math.random() })
          ])
        )
    }
  ]
}
