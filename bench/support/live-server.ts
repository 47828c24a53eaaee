import { liveServers } from './live-servers.js'
import { roomCount, seedRecords, type LiveScale } from './live-workload.js'

/**
 * One server of `npm run bench:live` (bench/live.ts) in a process of its own, so that its CPU is its own:
 * LIVE_SERVER=plumage or feathers (bench/support/live-servers.ts). Announces `{ id: 0, value: { url } }` over IPC,
 * then answers the driver's messages with the same `id`: `seed` (the scale's seed records, answered with their ids),
 * `stats` (CPU, RSS and heap as they are, and what plumage's views hold).
 */
type Command = { id: number; type: 'seed' | 'stats'; scale?: LiveScale }

const kind = process.env.LIVE_SERVER ?? 'plumage'
const start = liveServers[kind]
if (!start) throw new Error(`LIVE_SERVER must be one of ${Object.keys(liveServers).join(', ')}`)
const server = await start({ maxWatches: Number(process.env.LIVE_SERVER_MAX_WATCHES ?? 100) })
process.on('message', (message: Command) => {
  const reply = (value: unknown) => process.send!({ id: message.id, value })
  if (message.type === 'seed') {
    const scale = message.scale!
    void server
      .seed(seedRecords(scale))
      .then((records) => reply({ ids: records.map((record) => record.id), rooms: roomCount(scale) }))
  } else if (message.type === 'stats') {
    const { rss, heapUsed } = process.memoryUsage()
    reply({ cpu: process.cpuUsage(), rss, heapUsed, views: server.views() ?? null })
  }
})
process.once('SIGTERM', () => void server.close().finally(() => process.exit(0)))
process.send!({ id: 0, value: { url: server.url } })
