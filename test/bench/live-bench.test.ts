import { io, type Socket } from 'socket.io-client'
import { LiveClientSet } from '../../bench/support/live-clients.js'
import { startLiveFeathers, startLivePlumage, type LiveServer } from '../../bench/support/live-servers.js'
import { frameOfRow } from '../../bench/support/horizon-live.js'
import {
  compareLists,
  frameLatencies,
  frameOf,
  ITEMS,
  liveScale,
  seedRecords,
  shapeOfWatch,
  shapeQuery,
  watchesOfSocket,
  WriteStream,
  type Item
} from '../../bench/support/live-workload.js'

/*
 * `npm run bench:live` at a tiny scale, in one process: the same servers, clients, writes and checks the bench runs
 * (bench/support/live-*.ts), so that the bench cannot rot unnoticed. Timings are not checked here.
 */
const scale = liveScale({
  BENCH_LIVE_QUERIES: '24',
  BENCH_LIVE_SOCKETS: '6',
  BENCH_LIVE_SHAPES: '12',
  BENCH_LIVE_RECORDS_PER_ROOM: '6',
  BENCH_LIVE_WINDOW: '3'
})

function connect(url: string): Promise<Socket> {
  const socket = io(url, { transports: ['websocket'], forceNew: true, reconnection: false })
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket))
    socket.once('connect_error', reject)
  })
}

const call = (socket: Socket, method: string, ...args: unknown[]) =>
  new Promise<unknown>((resolve, reject) =>
    socket.emit(method, ITEMS, ...args, (error: unknown, result: unknown) =>
      error ? reject(new Error(JSON.stringify(error))) : resolve(result)
    )
  )

/** Until the clients got no frame for 300 ms. */
async function settle(clients: LiveClientSet): Promise<void> {
  let seen = -1
  while (clients.frames.length !== seen) {
    seen = clients.frames.length
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
}

/** Seeds, opens every watch, sends `writes` writes of the bench's stream one after the other, and settles. */
async function run(server: LiveServer, kind: 'plumage' | 'feathers', writes: number) {
  const stream = new WriteStream(scale)
  for (const record of await server.seed(seedRecords(scale))) stream.known(record.id)
  const clients = new LiveClientSet(kind, server.url, scale)
  await clients.open(Array.from({ length: scale.sockets }, (_, socket) => socket))
  const writer = await connect(server.url)
  for (let n = 0; n < writes; n++) {
    const t = performance.timeOrigin + performance.now()
    const write = stream.write(t)
    if (write.type === 'create') stream.created(((await call(writer, 'create', write.data, {})) as Item).id, t)
    else if (write.type === 'patch') await call(writer, 'patch', write.id, write.data, {})
    else await call(writer, 'remove', write.id, {})
  }
  await settle(clients)
  return { clients, stream, writer }
}

describe('bench:live building blocks', () => {
  it('spreads the watches over the sockets and the shapes, each shape a distinct query', () => {
    const all = Array.from({ length: scale.sockets }, (_, socket) => watchesOfSocket(socket, scale)).flat()
    expect(all.sort((a, b) => a - b)).toEqual(Array.from({ length: scale.queries }, (_, q) => q))
    const shapes = new Set(all.map((q) => JSON.stringify(shapeQuery(shapeOfWatch(q, scale), scale))))
    expect(shapes.size).toBe(scale.shapes)
    expect([...shapes].some((shape) => shape.includes('$limit'))).toBe(true)
    for (let socket = 0; socket < scale.sockets; socket++) {
      const own = watchesOfSocket(socket, scale).map((q) => shapeOfWatch(q, scale))
      expect(new Set(own).size).toBe(own.length)
    }
  })

  it('traces a change to the write that caused it, also a refill after a removal', () => {
    const writeTimes = new Map([
      [1, [100]],
      [2, [50, 300]],
      [3, [10]]
    ])
    // Record 2 removed at 300, record 3 (written at 10) takes its place in the window.
    const refill = frameOf(320, [
      { type: 'removed', record: { id: 2, t: 50 } },
      { type: 'added', record: { id: 3, t: 10 } }
    ])
    const patched = frameOf(130, [{ type: 'changed', record: { id: 1, t: 100 } }])
    expect(frameLatencies([refill, patched], writeTimes)).toEqual([20, 30])
    expect(frameOfRow(400, { old_val: { id: 2 } as Item, new_val: { id: 3, t: 10 } as Item })).toEqual({
      at: 400,
      t: 10,
      removed: [2]
    })
  })

  it('tells equal lists, another order and wrong lists apart', () => {
    const a = { id: 1, score: 1 }
    const b = { id: 2, score: 2 }
    expect(compareLists([a, b], [a, b])).toBe('equal')
    expect(compareLists([b, a], [a, b])).toBe('order')
    expect(compareLists([a], [a, b])).toBe('wrong')
    expect(compareLists([a, { id: 2, score: 3 }], [a, b])).toBe('wrong')
  })

  it('plumage: every watch equals a fresh find after the writes, every change traced to its write', async () => {
    const server = await startLivePlumage()
    try {
      const { clients, stream, writer } = await run(server, 'plumage', 90)
      expect(clients.watchCount).toBe(scale.queries)
      expect(clients.frames.length).toBeGreaterThan(20)
      expect(clients.unknownFrames).toBe(0)
      const latencies = frameLatencies(clients.frames, stream.writeTimes)
      expect(latencies).toHaveLength(clients.frames.length)
      expect(Math.min(...latencies)).toBeGreaterThanOrEqual(0)
      expect(await clients.verify()).toEqual({ equal: scale.queries, order: 0, wrong: 0, wrongWindows: 0, short: 0 })
      expect(server.views()?.views).toBe(scale.shapes)
      writer.disconnect()
      clients.close()
    } finally {
      await server.close()
    }
  })

  it('Feathers + feathers-reactive: its lists follow the events, and a window it shrank is counted wrong', async () => {
    const server = await startLiveFeathers()
    try {
      const { clients, writer } = await run(server, 'feathers', 30)
      expect(clients.watchCount).toBe(scale.queries)
      expect(clients.frames.length).toBeGreaterThan(5)
      // Empty one room's top-3 window from the top: feathers-reactive drops each record and never refills.
      const window = Array.from({ length: scale.shapes }, (_, shape) => shapeQuery(shape, scale)).find(
        (query) => '$limit' in query
      )!
      expect(window.$limit).toBe(3)
      const { $sort, $limit, ...filter } = window
      const top = (await call(writer, 'find', { ...filter, $sort, $limit })) as Item[]
      for (const record of top) await call(writer, 'remove', record.id, {})
      await settle(clients)
      const verdicts = await clients.verify()
      expect(verdicts.equal + verdicts.order + verdicts.wrong).toBe(scale.queries)
      expect(verdicts.short).toBeGreaterThan(0)
      expect(verdicts.wrongWindows).toBeGreaterThan(0)
      writer.disconnect()
      clients.close()
    } finally {
      await server.close()
    }
  })
})
