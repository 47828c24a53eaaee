/**
 * Read your writes (issue 40): what the fence costs a socket write. The built server (memory store, live queries and
 * connection recovery on, as `npm start` runs it) in its own process; two plumage clients on their own sockets,
 * each with one live watch open on `messages` (the query the writes land in): one with the fence (the default: each
 * write asks for its offset and waits for its socket's `fence` answer), one without (`readYourWrites({ enabled:
 * false })`). Rounds interleaved, the order flipped every round; in each, WRITES creates one after another per
 * client, each timed from the call to its promise settling. Reported: the median of the rounds' medians, the
 * difference (goal: ≤ 1 ms) and the ratio.
 */
import { io as connectClient, type Socket } from 'socket.io-client'
import { createClient, readYourWrites, socketio, type ClientApp } from '../src/library/client.js'
import { BENCH_USER } from './support/auth-setup.js'
import { printTable, writeResults } from './support/measure.js'
import { spawnPlumage } from './support/plumage-process.js'
import { killChildren, stopChild } from './support/processes.js'

const QUICK = process.env.BENCH_QUICK === '1'
const ROUNDS = QUICK ? 3 : 9
const WRITES = QUICK ? 100 : 300
const WARMUP = 200

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

async function token(url: string): Promise<string> {
  const post = (path: string, body: unknown) =>
    fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  await post('/users', BENCH_USER)
  const login = await post('/authentication', { strategy: 'local', ...BENCH_USER })
  return ((await login.json()) as { accessToken: string }).accessToken
}

async function clientOf(url: string, accessToken: string, fenced: boolean, sockets: Socket[]): Promise<ClientApp> {
  const socket = connectClient(url, {
    transports: ['websocket'],
    extraHeaders: { Authorization: `Bearer ${accessToken}` }
  })
  sockets.push(socket)
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  const client = createClient()
    .configure(socketio(socket))
    .configure(readYourWrites({ enabled: fenced }))
  await client.service('messages').watch({ query: { tag: 'bench', $sort: { id: -1 }, $limit: 10 } }).ready
  return client
}

async function timedWrites(client: ClientApp, count: number): Promise<number[]> {
  const times: number[] = []
  for (let n = 0; n < count; n++) {
    const start = performance.now()
    await client.service('messages').create({ text: `w${n}`, tag: 'bench' })
    times.push(performance.now() - start)
  }
  return times
}

const { child, value: url } = await spawnPlumage('plumage', 'dist/plumage.mjs', { STORE: 'memory' })
const sockets: Socket[] = []
try {
  const accessToken = await token(url)
  const fenced = await clientOf(url, accessToken, true, sockets)
  const unfenced = await clientOf(url, accessToken, false, sockets)
  await timedWrites(fenced, WARMUP)
  await timedWrites(unfenced, WARMUP)
  const medians = { fenced: [] as number[], unfenced: [] as number[] }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['fenced', 'unfenced'] as const) : (['unfenced', 'fenced'] as const)
    for (const which of order)
      medians[which].push(median(await timedWrites(which === 'fenced' ? fenced : unfenced, WRITES)))
  }
  const withFence = median(medians.fenced)
  const without = median(medians.unfenced)
  const rows = [
    {
      case: 'socket create, one live watch open (memory)',
      'unfenced median ms': without,
      'fenced median ms': withFence,
      'difference ms': withFence - without,
      ratio: withFence / without
    }
  ]
  printTable(`Read your writes: a fenced vs an unfenced socket write (${ROUNDS} rounds × ${WRITES} writes)`, rows)
  console.log(withFence - without <= 1 ? 'goal met: ≤ 1 ms at the median' : 'GOAL MISSED: more than 1 ms at the median')
  writeResults('read-your-writes', rows)
} finally {
  for (const socket of sockets) socket.disconnect()
  await stopChild(child)
  killChildren()
}
