/**
 * The workload of `npm run bench:live` (bench/live.ts), shared by every side of it and by its test
 * (test/bench/live-bench.test.ts): the scale (BENCH_LIVE_* variables), the shapes of the live queries, the seed
 * records, the stream of writes, and how a change that reaches a client is traced back to the write that caused it.
 */
import { sameValue } from '../../src/domain/query/live-window.js'

export interface LiveScale {
  /** Live queries in all (BENCH_LIVE_QUERIES, default 10,000). */
  queries: number
  /** Sockets they are spread over (BENCH_LIVE_SOCKETS, default 2,000). */
  sockets: number
  /** Distinct queries among them (BENCH_LIVE_SHAPES, default 1,000). */
  shapes: number
  /** Writes per second of the steady phase (BENCH_LIVE_WRITES, default 100). */
  writesPerSecond: number
  /** How long the steady phase writes (BENCH_LIVE_SECONDS, default 20). */
  seconds: number
  /** Client processes holding the sockets (BENCH_LIVE_CLIENTS, default 2). */
  clientProcesses: number
  /** Records seeded per room (BENCH_LIVE_RECORDS_PER_ROOM, default 10). */
  recordsPerRoom: number
  /** `$limit` of the window shapes (BENCH_LIVE_WINDOW, default 5). */
  window: number
}

/** The scale: what `liveScale` answers when no BENCH_LIVE_* variable is set. */
export const LIVE_DEFAULTS: Readonly<LiveScale> = {
  queries: 10_000,
  sockets: 2_000,
  shapes: 1_000,
  writesPerSecond: 100,
  seconds: 20,
  clientProcesses: 2,
  recordsPerRoom: 10,
  window: 5
}

type LiveEnv = Partial<Record<string, string>>

/** The scale from BENCH_LIVE_* (the process's environment unless `env` is given); unset or invalid: the default. */
export function liveScale(
  env: LiveEnv = {
    BENCH_LIVE_QUERIES: process.env.BENCH_LIVE_QUERIES,
    BENCH_LIVE_SOCKETS: process.env.BENCH_LIVE_SOCKETS,
    BENCH_LIVE_SHAPES: process.env.BENCH_LIVE_SHAPES,
    BENCH_LIVE_WRITES: process.env.BENCH_LIVE_WRITES,
    BENCH_LIVE_SECONDS: process.env.BENCH_LIVE_SECONDS,
    BENCH_LIVE_CLIENTS: process.env.BENCH_LIVE_CLIENTS,
    BENCH_LIVE_RECORDS_PER_ROOM: process.env.BENCH_LIVE_RECORDS_PER_ROOM,
    BENCH_LIVE_WINDOW: process.env.BENCH_LIVE_WINDOW
  }
): LiveScale {
  const number = (value: string | undefined, fallback: number) => {
    const parsed = Number(value)
    return value !== undefined && value !== '' && Number.isFinite(parsed) && parsed > 0 ? parsed : fallback
  }
  const scale = {
    queries: number(env.BENCH_LIVE_QUERIES, LIVE_DEFAULTS.queries),
    sockets: number(env.BENCH_LIVE_SOCKETS, LIVE_DEFAULTS.sockets),
    shapes: number(env.BENCH_LIVE_SHAPES, LIVE_DEFAULTS.shapes),
    writesPerSecond: number(env.BENCH_LIVE_WRITES, LIVE_DEFAULTS.writesPerSecond),
    seconds: number(env.BENCH_LIVE_SECONDS, LIVE_DEFAULTS.seconds),
    clientProcesses: number(env.BENCH_LIVE_CLIENTS, LIVE_DEFAULTS.clientProcesses),
    recordsPerRoom: number(env.BENCH_LIVE_RECORDS_PER_ROOM, LIVE_DEFAULTS.recordsPerRoom),
    window: number(env.BENCH_LIVE_WINDOW, LIVE_DEFAULTS.window)
  }
  scale.shapes = Math.min(scale.shapes, scale.queries)
  scale.sockets = Math.min(scale.sockets, scale.queries)
  return scale
}

/** The service every side serves: `{ id, room, kind, score, t, seq }` records in memory, no pagination. */
export const ITEMS = 'items'

export interface Item {
  id: number
  room: string
  kind: 'a' | 'b'
  score: number
  /** When the write that made this value was sent (performance.timeOrigin + performance.now(), driver's clock). */
  t: number
  /** The number of that write (0: seeded). */
  seq: number
}

export type Query = Record<string, unknown>

/** Rooms: half as many as shapes (each room has a plain equality shape, and some a second one). */
export const roomCount = (scale: Pick<LiveScale, 'shapes'>) => Math.max(1, Math.ceil(scale.shapes / 2))

/**
 * The distinct queries. The first half: `{ room }` (one per room). The second half, per room in turn: three in five
 * `{ room, kind: 'b' }` (two equality predicates), two in five a top-N window `{ room, $sort: { score: -1, id: 1 },
 * $limit }` — ties ordered by id, so that a fresh `find` has one answer.
 */
export function shapeQuery(shape: number, scale: Pick<LiveScale, 'shapes' | 'window'>): Query {
  const rooms = roomCount(scale)
  if (shape < rooms) return { room: `r${shape}` }
  const second = shape - rooms
  const room = `r${second % rooms}`
  return second % 5 < 3 ? { room, kind: 'b' } : { room, $sort: { score: -1, id: 1 }, $limit: scale.window }
}

/** Watch `q` (0 ≤ q < queries) has shape floor(q · shapes / queries) and lives on socket q mod sockets. */
export const shapeOfWatch = (q: number, scale: Pick<LiveScale, 'shapes' | 'queries'>) =>
  Math.floor((q * scale.shapes) / scale.queries)

/** The watches of socket `socket`: q = socket, socket + sockets, … (distinct shapes on one socket). */
export function watchesOfSocket(socket: number, scale: Pick<LiveScale, 'queries' | 'sockets'>): number[] {
  const watches: number[] = []
  for (let q = socket; q < scale.queries; q += scale.sockets) watches.push(q)
  return watches
}

/** A small deterministic generator (mulberry32), so every side gets the same writes. */
export function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let value = state
    value = Math.imul(value ^ (value >>> 15), value | 1)
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61)
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296
  }
}

/** The seed records (without ids): `recordsPerRoom` per room, kinds and scores from the generator. */
export function seedRecords(scale: Pick<LiveScale, 'shapes' | 'recordsPerRoom'>): Omit<Item, 'id'>[] {
  const next = random(1)
  const records: Omit<Item, 'id'>[] = []
  for (let room = 0; room < roomCount(scale); room++)
    for (let n = 0; n < scale.recordsPerRoom; n++)
      records.push({ room: `r${room}`, kind: next() < 0.5 ? 'a' : 'b', score: Math.floor(next() * 100), t: 0, seq: 0 })
  return records
}

export type Write =
  | { type: 'create'; data: Omit<Item, 'id'> }
  | { type: 'patch'; id: number; data: Partial<Item> }
  | { type: 'remove'; id: number }

/**
 * The stream of writes: a third creates, a third patches (a new score, one in five also the other kind, one in ten
 * another room), a third removes; patches and removes pick among the ids the store has acknowledged and that no
 * remove was sent for. `t` is stamped by `next()` at the time of sending and every write's time is logged by id
 * (`writeTimes`), so that a client's change can be traced back to the write that caused it.
 */
export class WriteStream {
  private readonly next: () => number
  private readonly ids: number[] = []
  private readonly at = new Map<number, number>()
  private seq = 0
  /** Send times of every write, by record id, in order (removes included). */
  readonly writeTimes = new Map<number, number[]>()

  constructor(
    private readonly scale: Pick<LiveScale, 'shapes'>,
    seed = 2
  ) {
    this.next = random(seed)
  }

  /** An id the store acknowledged (seeded or created). */
  known(id: number): void {
    if (this.at.has(id)) return
    this.at.set(id, this.ids.length)
    this.ids.push(id)
  }

  get size(): number {
    return this.ids.length
  }

  /** The next write, stamped with `now`. */
  write(now: number): Write {
    const seq = ++this.seq
    const draw = this.next()
    const room = () => `r${Math.floor(this.next() * roomCount(this.scale))}`
    const score = Math.floor(this.next() * 100)
    if (draw < 1 / 3 || this.ids.length < 2)
      return { type: 'create', data: { room: room(), kind: this.next() < 0.5 ? 'a' : 'b', score, t: now, seq } }
    const id = this.ids[Math.floor(this.next() * this.ids.length)]!
    this.log(id, now)
    if (draw < 2 / 3) {
      const data: Partial<Item> = { score, t: now, seq }
      if (this.next() < 0.2) data.kind = this.next() < 0.5 ? 'a' : 'b'
      if (this.next() < 0.1) data.room = room()
      return { type: 'patch', id, data }
    }
    this.forget(id)
    return { type: 'remove', id }
  }

  /** Logs a create's time once the store named its id. */
  created(id: number, t: number): void {
    this.log(id, t)
    this.known(id)
  }

  private log(id: number, t: number): void {
    const times = this.writeTimes.get(id)
    if (times) times.push(t)
    else this.writeTimes.set(id, [t])
  }

  private forget(id: number): void {
    const index = this.at.get(id)!
    const last = this.ids.pop()!
    if (last !== id) {
      this.ids[index] = last
      this.at.set(last, index)
    }
    this.at.delete(id)
  }
}

/**
 * One change a client saw: when it arrived (`at`), the largest `t` of the records it added or changed, and the ids
 * it removed. Its cause is the latest of those writes: a record a window takes in to refill itself carries an older
 * `t` than the write that made room for it.
 */
export interface Frame {
  at: number
  t: number
  removed: number[]
}

/** Latest time in `times` (ascending) not after `at`, or -Infinity. */
function latestBefore(times: number[] | undefined, at: number): number {
  if (!times) return -Infinity
  let best = -Infinity
  for (const time of times) if (time <= at) best = time
  return best
}

/** Write → client latency of each frame (ms), from the writes' log; frames with no traceable cause are left out. */
export function frameLatencies(frames: Frame[], writeTimes: Map<number, number[]>): number[] {
  const latencies: number[] = []
  for (const frame of frames) {
    let cause = frame.t > 0 ? frame.t : -Infinity
    for (const id of frame.removed) cause = Math.max(cause, latestBefore(writeTimes.get(id), frame.at))
    if (cause > 0) latencies.push(frame.at - cause)
  }
  return latencies
}

/** A frame from a list's changes: `added`/`changed` records give their `t`, `removed` ones their id. */
export function frameOf(at: number, changes: { type: string; record: Record<string, unknown> }[]): Frame {
  let t = 0
  const removed: number[] = []
  for (const change of changes) {
    if (change.type === 'removed') removed.push(change.record.id as number)
    else t = Math.max(t, (change.record.t as number) ?? 0)
  }
  return { at, t, removed }
}

export type Verdict = 'equal' | 'order' | 'wrong'

/**
 * A client's list against a fresh `find`: equal; the same records in another order (only for queries without
 * `$sort`, whose order `find` leaves to the store); or wrong (a record missing, extra or stale).
 */
export function compareLists(list: Record<string, unknown>[], fresh: Record<string, unknown>[]): Verdict {
  if (list.length === fresh.length && list.every((record, index) => sameValue(record, fresh[index]))) return 'equal'
  if (list.length !== fresh.length) return 'wrong'
  const byId = new Map(fresh.map((record) => [record.id, record]))
  return list.every((record) => byId.has(record.id) && sameValue(record, byId.get(record.id))) ? 'order' : 'wrong'
}

/** The `p` quantile (0–1) of `values`, NaN when there are none. */
export function quantile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return NaN
  const sorted = Float64Array.from(values).sort()
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}
