import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { BadRequest } from '../../../src/domain/errors/errors.js'
import type { StoreQuery } from '../../../src/domain/query/ast.js'
import { parseQuery } from '../../../src/domain/query/parse-query.js'
import type { Data } from '../../../src/domain/service/service.js'
import type { Store } from '../../../src/domain/store/store.js'
import { InMemoryStore } from '../../../src/infrastructure/memory/in-memory-store.js'
import { PostgresDatabase } from '../../../src/infrastructure/postgres/postgres-database.js'
import { PostgresStoreFactory } from '../../../src/infrastructure/postgres/postgres-store-factory.js'
import { discoverPostgres } from '../../support/postgres-server.js'

// Hostile field names, operators and values: every value is a parameter and every field name a literal
// quoted by node-postgres, so none changes a statement; each query answers what the memory store answers,
// or a 400 — never a 500, never a dropped table.
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip

afterAll(async () => {
  await database?.stop()
})

const q = (raw: Record<string, unknown>): StoreQuery => parseQuery(raw, { operators: ['$search', '$contains'] })

const HOSTILE: string[] = [
  "'; DROP TABLE victims; --",
  "name') OR ('1'='1",
  'a"b',
  'back\\slash',
  '{x,y}',
  'NULL',
  'x$1',
  "doc -> 'x'",
  '*/ SELECT 1 /*',
  'ünïcødé ✓ 🐘',
  "E'\\x27'",
  "'",
  '\\',
  "\\'",
  "'\\",
  "a\\'); DROP TABLE victims; --",
  "x' || pg_sleep(5) || '",
  '1$1',
  'a $2::text',
  'e\u0301\u200b\u202eRTL',
  'x'.repeat(2000),
  "'\\$1".repeat(3000)
]

/** Test names show a long text by its length. */
const named = HOSTILE.map((text) => [
  text.length > 40 ? `${text.slice(0, 10)}… (${text.length} characters)` : text,
  text
])

withServer('PostgresStore with hostile input', () => {
  const db = new PostgresDatabase({ url: database?.url ?? 'postgres://unused' })
  const factory = new PostgresStoreFactory(db, { watch: false })
  let store: Store
  const memory = new InMemoryStore()
  const records: Data[] = [
    { id: 'v1', name: "'; DROP TABLE victims; --", tags: ['a"b', '{x,y}'], nested: { "it's": 1 } },
    { id: 'v2', name: 'a"b', "weird ' key": 'quote', 'back\\slash': true, tags: ['NULL'] },
    { id: 'v3', name: 'plain', age: 3, tags: [] }
  ]

  beforeAll(async () => {
    store = factory.create('victims')
    await store.setup!()
    await store.create(records, q({}))
    await memory.create(records, q({}))
  })
  afterAll(() => factory.close())

  /** The same answer as the memory store, and the table still holds every record. */
  async function same(raw: Record<string, unknown>): Promise<void> {
    const sort = (found: Data[]) => [...found].sort((a, b) => String(a.id).localeCompare(String(b.id)))
    expect(sort(await store.find(q(raw)))).toEqual(sort(await memory.find(q(raw))))
    expect(await store.count(q({}).filter)).toBe(3)
  }

  it.each(named)('takes %j as a field name in filters, $sort and $select', async (_name, key) => {
    await same({ [key]: 'quote' })
    await same({ [key]: { $ne: null } })
    await same({ [key]: { $in: HOSTILE, $nin: ['x'] } })
    await same({ [key]: { $gt: 'a' } })
    await same({ [`nested.${key}`]: 1 })
    await same({ $sort: { [key]: -1, id: 1 } })
    await same({ $select: [key, 'name'] })
    await same({ $or: [{ [key]: { $contains: key } }, { [key]: { $search: 'x' } }] })
  })

  it.each(named)('takes %j as a value of every operator', async (_name, value) => {
    await same({ name: value })
    await same({ name: { $ne: value } })
    await same({ name: { $in: [value, 'plain'] } })
    await same({ name: { $nin: [value] } })
    await same({ name: { $lt: value } })
    await same({ tags: { $contains: value } })
    await same({ name: { $eq: { [value]: [value] } } })
  })

  it('takes parameter markers as field names where the query language allows a leading $', async () => {
    await same({ 'nested.$1': 1 })
    await same({ 'nested.$1': { $in: ['$1', 1] }, name: { $ne: '$2' } })
    await same({ $sort: { $1: -1, id: 1 } })
    await same({ $sort: { '$2::text': 1, 'nested.$1': -1, id: 1 }, $limit: 2 })
  })

  it.each(named)(
    'takes %j as a field name in a get, patch and remove by id (prepared statements)',
    async (_name, key) => {
      const record = { id: 'p1', [key]: 'k' }
      await store.create([record], q({}))
      expect(await store.get('p1', q({ [key]: 'k' }))).toEqual(record)
      expect(await store.get('p1', q({ [key]: 'other' }))).toBeNull()
      expect(await store.patch('p1', { n: 1 }, q({ [key]: { $ne: null } }))).toEqual([{ ...record, n: 1 }])
      expect(await store.update('p1', { [key]: 'u' }, q({ [key]: { $in: ['k'] } }))).toEqual({ id: 'p1', [key]: 'u' })
      expect(await store.remove('p1', q({ [key]: 'k' }))).toEqual([])
      expect(await store.remove('p1', q({ [key]: 'u' }))).toEqual([{ id: 'p1', [key]: 'u' }])
      await same({})
    }
  )

  it('takes a hostile name for the id field (a literal in an update)', async () => {
    const idField = HOSTILE.find((text) => text.includes("'") && text.includes('\\'))!
    const odd = factory.create('victims_ids', { id: idField })
    await odd.setup!()
    await odd.create([{ [idField]: 'a', name: 'x' }], q({}))
    expect(await odd.update('a', { name: 'y' }, q({}))).toEqual({ [idField]: 'a', name: 'y' })
    expect(await odd.get('a', q({}))).toEqual({ [idField]: 'a', name: 'y' })
    await same({})
  })

  it('matches hostile strings inside $in exactly (array literal quoting)', async () => {
    expect((await store.find(q({ tags: { $contains: 'a"b' } }))).map((r) => r.id)).toEqual(['v1'])
    expect((await store.find(q({ name: { $in: ['a"b'] } }))).map((r) => r.id)).toEqual(['v2'])
    expect((await store.find(q({ "weird ' key": { $in: ['quote'] } }))).map((r) => r.id)).toEqual(['v2'])
    expect((await store.find(q({ 'back\\slash': true }))).map((r) => r.id)).toEqual(['v2'])
  })

  it('stores and returns records with hostile keys and values unchanged', async () => {
    const hostile: Data = Object.fromEntries(HOSTILE.map((text, n) => [text, { n, text, list: [text] }]))
    const [created] = await store.create([{ id: 'h1', ...hostile }], q({}))
    expect(await store.get('h1', q({}))).toEqual(created)
    await store.patch('h1', { [HOSTILE[0]!]: 'patched' }, q({ [HOSTILE[1]!]: { $ne: null } }))
    expect((await store.get('h1', q({})))![HOSTILE[0]!]).toBe('patched')
    await store.remove('h1', q({}))
    await same({})
  })

  it('takes hostile ids', async () => {
    for (const id of HOSTILE) {
      await store.create([{ id, name: 'id' }], q({}))
      expect(await store.get(id, q({}))).toEqual({ id, name: 'id' })
      expect(await store.remove(id, q({}))).toEqual([{ id, name: 'id' }])
    }
    await same({})
  })

  it('answers 400 for the NUL character, which PostgreSQL text cannot hold', async () => {
    await expect(store.find(q({ name: 'a\u0000b' }))).rejects.toBeInstanceOf(BadRequest)
    await expect(store.find(q({ 'a\u0000b': 1 }))).rejects.toBeInstanceOf(BadRequest)
    await expect(store.find(q({ $sort: { 'a\u0000': 1 } }))).rejects.toBeInstanceOf(BadRequest)
    await expect(store.create([{ name: 'a\u0000b' }], q({}))).rejects.toBeInstanceOf(BadRequest)
    await expect(store.patch('v3', { 'x\u0000': 1 }, q({}))).rejects.toBeInstanceOf(BadRequest)
    // In a field name, of a nested path too, whatever the statement: a clear 400 from the compiler.
    const nulInName = expect.objectContaining({ message: 'Field names cannot contain the NUL character' })
    await expect(store.find(q({ 'nested.a\u0000': { $in: [1, null] } }))).rejects.toEqual(nulInName)
    await expect(store.page(q({ $sort: { 'a\u0000': 1 }, $limit: 1 }))).rejects.toEqual(nulInName)
    await expect(store.count(q({ 'a\u0000': null }).filter)).rejects.toEqual(nulInName)
    await expect(store.get('v3', q({ 'a\u0000': 1 }))).rejects.toEqual(nulInName)
    await expect(store.patch('v3', { x: 1 }, q({ 'a\u0000': { $ne: 1 } }))).rejects.toEqual(nulInName)
    await expect(store.update('v3', { x: 1 }, q({ 'a\u0000': 1 }))).rejects.toEqual(nulInName)
    await expect(store.remove(null, q({ 'a\u0000': { $contains: 1 } }))).rejects.toEqual(nulInName)
    await expect(store.find(q({ 'a\u0000': 1 }))).rejects.toBeInstanceOf(BadRequest)
    await same({})
  })

  it('answers 400 for an invalid RE2 pattern', async () => {
    await expect(store.find(q({ name: { $search: '(' } }))).rejects.toBeInstanceOf(BadRequest)
    await expect(store.patch(null, { x: 1 }, q({ name: { $search: '[' } }))).rejects.toBeInstanceOf(BadRequest)
  })

  it('quotes hostile service names as table names', async () => {
    const odd = factory.create('we"ird; DROP TABLE victims')
    await odd.setup!()
    await odd.create([{ id: 1, name: 'odd' }], q({}))
    expect(await odd.find(q({}))).toEqual([{ id: 1, name: 'odd' }])
    await same({})
  })
})
