/**
 * `npm run bench:live-matching`: what one write costs live queries as the number of views grows (issue 39: the
 * matching cost per write of equality-shaped live queries should stay within ±25 % from 100 to 10,000). In one
 * process, without sockets: LIVE_VIEWS views (100, 1,000 and 10,000 by default) of `{ room: 'r<i>', $sort: { id:
 * 1 }, $limit: 10 }` on the memory store, each with one watch; then writes handed to the feed as published events
 * of two shapes — a create in a room no view watches (matching only), and a patch of a record inside one
 * window (matching, the window's update and one frame): the time per write covers the matching (the QueryIndex of
 * equality anchors, the holders of the record), the window and the frame, not the store or a socket. Patches go to
 * a scattered view each time, to the views in turn, or ten in a row to each view in turn: the view a write reaches
 * is cold in the processor's caches in the first two once there are many views, warm in the third.
 * Medians over LIVE_ROUNDS rounds (default 5, after one warm-up round) of LIVE_WRITES writes (default 20,000); the
 * rounds are interleaved: every size is set up first, and each round runs each size in turn.
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

type Shape =
  'no view matches' | 'one view changes' | 'one view changes, views in turn' | 'one view changes, ten in a row'

/** One feed with `views` views, ready to take writes of each shape. */
async function setUp(views: number): Promise<Record<Shape, (write: number) => void>> {
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
  const patch = (record: number, write: number) => {
    const room = `r${Math.floor((record - 1) / 10)}`
    live.observe({ path: 'messages', event: 'patched', data: { id: record, room, text: String(write) } }, undefined)
  }
  return {
    'no view matches': () =>
      live.observe({ path: 'messages', event: 'created', data: { id: ++id, room: 'elsewhere', text: '0' } }, undefined),
    'one view changes': (write) => patch(1 + ((write * 7919) % held), write),
    // Each view's ten records one after the other: the view is in the processor's cache after the first.
    'one view changes, ten in a row': (write) => patch(1 + (write % held), write),
    'one view changes, views in turn': (write) =>
      patch(1 + (write % views) * 10 + (Math.floor(write / views) % 10), write)
  }
}

/** µs per write of one round: WRITES writes of one shape. */
function round(write: (write: number) => void, from: number): number {
  const start = process.hrtime.bigint()
  for (let n = 0; n < WRITES; n++) write(from + n)
  return Number(process.hrtime.bigint() - start) / 1000 / WRITES
}

const feeds = new Map<number, Record<Shape, (write: number) => void>>()
for (const views of SIZES) feeds.set(views, await setUp(views))
const shapes: Shape[] = [
  'no view matches',
  'one view changes',
  'one view changes, views in turn',
  'one view changes, ten in a row'
]
const times = new Map<string, number[]>()
// Rounds interleaved: each round runs every size once, in an order that rotates, so that a slow moment of the
// machine lands on every size alike; all sizes live in the same heap during every round.
for (let r = 0; r < ROUNDS + 1; r++)
  for (let s = 0; s < SIZES.length; s++) {
    const views = SIZES[(r + s) % SIZES.length]!
    for (const shape of shapes) {
      const time = round(feeds.get(views)![shape], r * WRITES)
      if (r > 0) times.set(`${shape}\n${views}`, [...(times.get(`${shape}\n${views}`) ?? []), time]) // round 0 warms up
    }
  }
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const rows: Record<string, string | number>[] = []
for (const shape of shapes) {
  const anchor = median(times.get(`${shape}\n${SIZES[0]}`)!)
  for (const views of SIZES) {
    const time = median(times.get(`${shape}\n${views}`)!)
    rows.push({ write: shape, views, 'µs per write': time, ratio: time / anchor })
  }
}
printTable(
  `Live queries: cost per write by number of equality views (${WRITES} writes × ${ROUNDS} interleaved rounds, median)`,
  rows
)
writeResults('live-matching', rows)
