/**
 * `npm run bench:live-matching`: what one write costs live queries as the number of views grows (issue 39: the
 * matching cost per write of equality-shaped live queries should stay within ±25 % from 100 to 10,000). In one
 * process, without sockets: LIVE_VIEWS views (100, 1,000 and 10,000 by default) of `{ room: 'r<i>', $sort: { id:
 * 1 }, $limit: 10 }` on the memory store, each with one watch; then writes handed to the feed as published events
 * of two shapes — a create in a room no view watches (matching only), and a patch of a record inside one
 * window (matching, the window's update and one frame) — handed to the feed as published events: the time per
 * write covers the matching (the QueryIndex of equality anchors, the holders of the record), the window and the
 * frame, not the store or a socket.
 * Medians over LIVE_ROUNDS rounds (default 5) of LIVE_WRITES writes (default 20,000).
 */
import { AdapterService } from '../src/application/adapter-service.js'
import { App } from '../src/application/app.js'
import { LiveQueries } from '../src/application/live/index.js'
import type { Connection } from '../src/domain/service/service.js'
import { InMemoryStore } from '../src/infrastructure/memory/in-memory-store.js'
import { printTable, writeResults } from './support/measure.js'

const SIZES = (process.env.LIVE_VIEWS ?? '100,1000,10000').split(',').map(Number)
const WRITES = Number(process.env.LIVE_WRITES ?? 20_000)
const ROUNDS = Number(process.env.LIVE_ROUNDS ?? 5)

type Shape = 'no view matches' | 'one view changes'

/** Median µs per write of one shape with `views` views: a create no view matches, or a patch inside one window. */
async function perWrite(views: number): Promise<Record<Shape, number>> {
  const app = new App()
  app.use('messages', new AdapterService(new InMemoryStore()))
  const live = new LiveQueries(app, { maxWatches: views })
  app.extend(live)
  await app.setup()
  const messages = app.service('messages')
  const connection: Connection = { provider: 'bench' }
  for (let room = 0; room < views; room++)
    await live.watch({
      connection,
      path: 'messages',
      query: { room: `r${room}`, $sort: { id: 1 }, $limit: 10 },
      options: {},
      find: (query) => messages.find({ query, paginate: false }),
      send: () => undefined,
      answer: () => undefined
    })
  // Ten records in each window.
  let id = 0
  for (let room = 0; room < views; room++)
    for (let n = 0; n < 10; n++)
      live.observe({ path: 'messages', event: 'created', data: { id: ++id, room: `r${room}`, text: '0' } }, undefined)
  const held = id
  const writes: Record<Shape, (write: number) => void> = {
    'no view matches': () =>
      live.observe({ path: 'messages', event: 'created', data: { id: ++id, room: 'elsewhere', text: '0' } }, undefined),
    'one view changes': (write) => {
      const record = 1 + ((write * 7919) % held)
      const room = `r${Math.floor((record - 1) / 10)}`
      live.observe({ path: 'messages', event: 'patched', data: { id: record, room, text: String(write) } }, undefined)
    }
  }
  const result = {} as Record<Shape, number>
  for (const shape of Object.keys(writes) as Shape[]) {
    const rounds: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const start = process.hrtime.bigint()
      for (let write = 0; write < WRITES; write++) writes[shape](round * WRITES + write)
      rounds.push(Number(process.hrtime.bigint() - start) / 1000 / WRITES)
    }
    rounds.sort((a, b) => a - b)
    result[shape] = rounds[Math.floor(rounds.length / 2)]!
  }
  return result
}

const rows: Record<string, string | number>[] = []
const first: Partial<Record<Shape, number>> = {}
for (const views of SIZES) {
  const measured = await perWrite(views)
  for (const shape of Object.keys(measured) as Shape[]) {
    first[shape] ??= measured[shape]
    rows.push({ write: shape, views, 'µs per write': measured[shape], ratio: measured[shape] / first[shape]! })
  }
}
rows.sort((a, b) => String(a.write).localeCompare(String(b.write)))
printTable(
  `Live queries: cost per write by number of equality views (${WRITES} writes × ${ROUNDS} rounds, median)`,
  rows
)
writeResults('live-matching', rows)
