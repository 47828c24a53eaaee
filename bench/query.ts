/**
 * Query engine: an in-memory find (filter + multi-key sort + limit) over 100,000 records,
 * plumage's InMemoryStore behind AdapterService vs @feathersjs/memory, measured in the same process.
 * Goal (issue 3): ≥ 5× faster.
 */
import { MemoryService } from '@feathersjs/memory'
import { AdapterService } from '../src/application/adapter-service.js'
import { InMemoryStore } from '../src/infrastructure/memory/in-memory-store.js'
import { measure, printTable, writeResults } from './support/measure.js'
import { peopleRecords } from './support/seed.js'

const RECORDS = 100_000
const records = peopleRecords(RECORDS)

const workloads: Record<string, Record<string, unknown>> = {
  'filter + 2-key sort + limit 10': {
    city: { $in: ['Rome', 'Paris', 'Oslo'] },
    age: { $gte: 30 },
    $sort: { age: -1, name: 1 },
    $limit: 10
  },
  '$or + sort + skip 100 limit 25': {
    $or: [{ city: 'Rome' }, { score: { $lt: 10 } }],
    $sort: { score: 1 },
    $skip: 100,
    $limit: 25
  },
  'equality filter, no sort, limit 50': { city: 'Berlin', $limit: 50 }
}

const store = new InMemoryStore()
await store.create(records, {})
const ours = new AdapterService(store)
const feathers = new MemoryService({ multi: true })
await feathers.create(records.map((record) => ({ ...record })))

const rows = []
for (const [name, query] of Object.entries(workloads)) {
  const a = await ours.find({ query })
  const b = await feathers.find({ query, paginate: false })
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`Results differ for '${name}'`)
  const anchor = await measure(() => feathers.find({ query, paginate: false }), { seconds: 2 })
  const candidate = await measure(() => ours.find({ query }), { seconds: 2 })
  rows.push({
    workload: name,
    'feathers ops/s': anchor.opsPerSecond,
    'plumage ops/s': candidate.opsPerSecond,
    ratio: candidate.opsPerSecond / anchor.opsPerSecond
  })
}
printTable(`In-memory find on ${RECORDS.toLocaleString()} records (anchor: @feathersjs/memory, same process)`, rows)
writeResults('query', rows)
