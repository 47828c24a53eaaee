import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { r, type Connection } from 'rethinkdb-ts'
import { RETHINKDB_BIN, rethinkDbProcess, type RethinkDbProcess } from '../../test/support/rethinkdb-process.js'
import {
  frameLatencies,
  quantile,
  roomCount,
  seedRecords,
  WriteStream,
  type Frame,
  type Item,
  type LiveScale
} from './live-workload.js'

/**
 * Side (a) of `npm run bench:live`: the Horizon design, one RethinkDB changefeed per subscriber, through rethinkdb-ts
 * (the driver plumage's RethinkDB store uses): `orderBy({ index: r.desc('room_score') }).between([room, minval],
 * [room, maxval], { index: 'room_score' }).limit(window).changes({ includeInitial, includeOffsets })`, the top-N of
 * one room, as Horizon's server compiles `findAll({ room }).order('score', 'descending').limit(n).watch()`; no feed
 * is shared. Subscriber i watches room i mod rooms. At each count of BENCH_LIVE_HORIZON (default 1,000, 5,000, 10,000)
 * the feeds open (FEED_CONCURRENCY at a time, spread over CONNECTIONS driver connections), the same writes run
 * (BENCH_LIVE_HORIZON_SECONDS, default 10, at the scale's rate) and each change a subscriber receives is traced to
 * its write as on the other sides. RethinkDB's CPU and RSS come from /proc of its process: the one RETHINKDB_BIN
 * starts (a throw-away server in a temp folder on 127.0.0.1), or RETHINKDB_PID beside RETHINKDB_URL.
 */
export interface HorizonRun {
  subscribers: number
  openMs: number
  writes: number
  frames: number
  p50: number
  p99: number
  cpuPerWriteMs?: number
  cpuShare?: number
  rss?: number
  /** The query form the server accepted. */
  form: string
  failed?: string
}

const CONNECTIONS = 10
const FEED_CONCURRENCY = 50
const QUIET_MS = 2_000
const QUIET_LIMIT_MS = 60_000
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Row = { new_val?: Item | null; old_val?: Item | null }
type Cursor = { on(event: string, listener: (value: never) => void): void; close(): Promise<void> }

/** CPU ms and RSS bytes of a process from /proc (Linux), or undefined. */
function processStats(pid: number | undefined): { cpuMs: number; rss: number } | undefined {
  if (pid === undefined) return undefined
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    const rss = Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? NaN) * 1024
    return { cpuMs: (Number(fields[11]) + Number(fields[12])) * 10, rss }
  } catch {
    return undefined
  }
}

/** A frame from a changefeed row: the new value's `t`; the old value's id when it left (or was replaced). */
export function frameOfRow(at: number, row: Row): Frame {
  const left = row.old_val && (!row.new_val || row.new_val.id !== row.old_val.id) ? [row.old_val.id] : []
  return { at, t: row.new_val?.t ?? 0, removed: left }
}

/** Runs Horizon's side, or answers the one loud line saying why it was skipped. */
export async function runHorizon(scale: LiveScale): Promise<HorizonRun[] | string> {
  let server: RethinkDbProcess | undefined
  let url = process.env.RETHINKDB_URL
  if (!url && !RETHINKDB_BIN)
    return 'HORIZON SIDE SKIPPED: set RETHINKDB_URL (and RETHINKDB_PID for its CPU) or RETHINKDB_BIN to run the Horizon design (one RethinkDB changefeed per subscriber)'
  const counts = (process.env.BENCH_LIVE_HORIZON ?? '1000,5000,10000').split(',').map(Number)
  const seconds = Number(process.env.BENCH_LIVE_HORIZON_SECONDS ?? 10)
  const connections: Connection[] = []
  const db = `plumage_live_${randomBytes(4).toString('hex')}`
  try {
    if (!url) {
      server = await rethinkDbProcess('bench-live')
      url = `rethinkdb://127.0.0.1:${server.driverPort}`
    }
    const { hostname, port } = new URL(url)
    const pid = server?.pid ?? (process.env.RETHINKDB_PID ? Number(process.env.RETHINKDB_PID) : undefined)
    for (let i = 0; i <= CONNECTIONS; i++)
      connections.push(await r.connect({ host: hostname, port: Number(port || 28015), silent: true }))
    const writer = connections[0]!
    const feeds = connections.slice(1)
    await r.dbCreate(db).run(writer)
    await r.db(db).tableCreate('items').run(writer)
    const table = r.db(db).table('items')
    await table.indexCreate('room_score', [r.row('room'), r.row('score')]).run(writer)
    await table.indexWait('room_score').run(writer)
    const runs: HorizonRun[] = []
    let nextId = 0
    const stream = new WriteStream(scale, 3)
    const seed = seedRecords(scale).map((record) => ({ ...record, id: ++nextId }))
    for (let i = 0; i < seed.length; i += 1000) await table.insert(seed.slice(i, i + 1000)).run(writer)
    for (const record of seed) stream.known(record.id)
    for (const subscribers of counts) {
      const run = await measure(subscribers)
      runs.push(run)
      console.log(
        `horizon ${subscribers}: feeds open in ${(run.openMs / 1000).toFixed(1)} s, p99 ${run.p99.toFixed(1)} ms, ` +
          `RethinkDB CPU ${run.cpuPerWriteMs?.toFixed(2) ?? '—'} ms/write${run.failed ? `, FAILED: ${run.failed}` : ''}`
      )
    }
    return runs

    async function measure(subscribers: number): Promise<HorizonRun> {
      const frames: Frame[] = []
      const cursors: Cursor[] = []
      const rooms = roomCount(scale)
      // Horizon's own form (its server's endpoint/query.js: `orderBy({ index })` then `between` on the same index,
      // then `limit`); a server that refuses it gets `between` first.
      const HORIZON = 'orderBy + between + limit (as Horizon)'
      let form = HORIZON
      const feed = (room: string) =>
        form === HORIZON
          ? table
              .orderBy({ index: r.desc('room_score') })
              .between([room, r.minval], [room, r.maxval], { index: 'room_score' })
              .limit(scale.window)
          : table
              .between([room, r.minval], [room, r.maxval], { index: 'room_score' })
              .orderBy({ index: r.desc('room_score') })
              .limit(scale.window)
      const opened = now()
      let next = 0
      let failed: string | undefined
      const open = async (i: number) => {
        const room = `r${i % rooms}`
        const run = () =>
          feed(room)
            .changes({ includeInitial: true, includeOffsets: true })
            .run(feeds[i % feeds.length]!) as unknown as Promise<Cursor>
        let cursor: Cursor
        try {
          cursor = await run()
        } catch (error) {
          if (form !== HORIZON) throw error
          form = 'between + orderBy + limit'
          cursor = await run()
        }
        cursors.push(cursor)
        // Initial rows carry only `new_val`, "uninitial" ones only `old_val`; a change carries both (null for an
        // insert's old and a delete's new value).
        cursor.on('data', ((row: Row) => {
          if ('old_val' in row && 'new_val' in row) frames.push(frameOfRow(now(), row))
        }) as never)
        cursor.on('error', ((error: Error) => (failed ??= error.message)) as never)
      }
      try {
        await Promise.all(
          Array.from({ length: FEED_CONCURRENCY }, async () => {
            while (next < subscribers) await open(next++)
          })
        )
      } catch (error) {
        return {
          subscribers,
          openMs: now() - opened,
          writes: 0,
          frames: 0,
          p50: NaN,
          p99: NaN,
          form,
          failed: String(error)
        }
      }
      const openMs = now() - opened
      await sleep(500)
      const before = processStats(pid)
      const started = now()
      const writes = Math.round(scale.writesPerSecond * seconds)
      const answered: Promise<unknown>[] = []
      for (let n = 0; n < writes; n++) {
        const due = started + (n * 1000) / scale.writesPerSecond
        if (due > now()) await sleep(due - now())
        const t = now()
        const write = stream.write(t)
        if (write.type === 'create') {
          const id = ++nextId
          stream.created(id, t)
          answered.push(table.insert({ ...write.data, id }).run(writer))
        } else if (write.type === 'patch') answered.push(table.get(write.id).update(write.data).run(writer))
        else answered.push(table.get(write.id).delete().run(writer))
      }
      await Promise.all(answered)
      let seen = -1
      let still = now()
      const waiting = now()
      while (now() - waiting < QUIET_LIMIT_MS) {
        await sleep(250)
        if (frames.length !== seen) {
          seen = frames.length
          still = now()
        } else if (now() - still >= QUIET_MS) break
      }
      const elapsed = now() - started
      const after = processStats(pid)
      await Promise.all(cursors.map((cursor) => cursor.close().catch(() => undefined)))
      const latencies = frameLatencies(frames, stream.writeTimes)
      return {
        subscribers,
        openMs,
        writes,
        frames: frames.length,
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
        ...(before && after
          ? {
              cpuPerWriteMs: (after.cpuMs - before.cpuMs) / writes,
              cpuShare: (after.cpuMs - before.cpuMs) / elapsed,
              rss: after.rss
            }
          : {}),
        form,
        ...(failed ? { failed } : {})
      }
    }
  } catch (error) {
    return `HORIZON SIDE FAILED: ${(error as Error).message}`
  } finally {
    if (connections.length > 0)
      await r
        .dbDrop(db)
        .run(connections[0]!)
        .catch(() => undefined)
    await Promise.all(connections.map((connection) => connection.close().catch(() => undefined)))
    await server?.destroy()
  }
}
