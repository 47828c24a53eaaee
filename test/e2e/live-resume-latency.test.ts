import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { loadavg } from 'node:os'
import type { Socket } from 'socket.io-client'
import type { ClientApp } from '../../src/interfaces/client/client-app.js'
import type { LiveWatch } from '../../src/interfaces/client/live-watch.js'
import type { SocketioTransport } from '../../src/interfaces/client/socket/socketio-transport.js'
import { builtInstances, call, PASSWORD, signUp, type Instance, type Instances } from '../support/app-instances.js'
import { discoverPostgres } from '../support/postgres-server.js'
import { proxiedClient } from '../support/proxied-client.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/*
 * How long a watch takes to resume on the other instance after a cut (issue 39), measured with real processes: two
 * instances of the built server on one PostgreSQL database, writes through both all along, each user's plumage
 * client behind its own TCP proxy (a load balancer) watching two queries. Each round moves one user to the other
 * instance and cuts its connection; the client reconnects, logs in and resumes both watches there. It prints the
 * distribution of the time from the cut to the reconnection, of each resume's answer (from its `watch` request),
 * of the cut to both watches live again, and the resumes that timed out (5 s) and were sent again. Asserted are
 * only what holds however loaded the machine is: every round resumes, no reset, and once writes are quiet every
 * list equals a fresh `find` (LIVE_RESUME_ROUNDS sets the rounds, default 24).
 */
const database = await discoverPostgres()
const withServer = database ? describe : describe.skip
if (!database) process.stderr.write('SKIPPED: live resume latency e2e (no PostgreSQL server and no binaries)\n')

const USERS = 3
const ROUNDS = Number(process.env.LIVE_RESUME_ROUNDS ?? 24)
const QUERIES = [
  { $sort: { id: -1 }, $limit: 4 },
  { tag: 'x', $sort: { n: 1 }, $limit: 10 }
]
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const portOf = (instance: Instance) => Number(new URL(instance.url).port)

let instances: Instances | undefined
let writing = false
const proxies: TcpProxy[] = []
const sockets: Socket[] = []

interface User {
  token: string
  socket: Socket
  client: ClientApp
  watches: LiveWatch<Record<string, unknown>>[]
  owned: string[]
  /** Each `watch` request with a resume: when it was sent, and when it was answered (or failed). */
  resumes: { sent: number; answered?: number; failed?: number }[]
  connects: number[]
}

beforeAll(async () => {
  if (database) instances = await builtInstances('live-resume')
}, 60_000)
afterAll(async () => {
  writing = false
  for (const socket of sockets) socket.disconnect()
  for (const proxy of proxies) await proxy.close()
  await instances?.cleanup()
  await database?.stop()
})

/** A user's client behind its proxy, its `watch` requests timed (the resumes among them). */
async function connectUser(email: string, proxy: TcpProxy, token: string): Promise<User> {
  const { socket, client } = proxiedClient(proxy)
  sockets.push(socket)
  const user: User = { token, socket, client, watches: [], owned: [], resumes: [], connects: [] }
  const transport = client.transport as SocketioTransport
  const requestWithLate = transport.requestWithLate.bind(transport)
  transport.requestWithLate = (late, event, ...args) => {
    const options = args[2] as { resume?: unknown } | undefined
    if (event !== 'watch' || !options?.resume) return requestWithLate(late, event, ...args)
    const timing: User['resumes'][number] = { sent: Date.now() }
    user.resumes.push(timing)
    return requestWithLate(late, event, ...args).then(
      (answer) => ((timing.answered = Date.now()), answer),
      (error: unknown) => {
        timing.failed = Date.now()
        throw error
      }
    )
  }
  client.on('connect', () => user.connects.push(Date.now()))
  await client.authenticate({ strategy: 'local', email, password: PASSWORD })
  user.watches = QUERIES.map((query) => client.service('messages').watch({ query }))
  await Promise.all(user.watches.map((watch) => watch.ready))
  return user
}

/** Writes by every user through a random instance until `writing` is false: creates, patches, removes. */
async function writeWhile(users: User[], targets: Instance[]): Promise<void> {
  let serial = 0
  await Promise.all(
    users.map(async (user) => {
      while (writing) {
        const url = targets[Math.floor(Math.random() * targets.length)]!.url
        const n = ++serial
        const roll = Math.random()
        const answer = await (
          user.owned.length < 3 || roll < 0.5
            ? call(url, user.token, 'POST', 'messages', { text: `w${n}`, n, tag: Math.random() < 0.5 ? 'x' : 'y' })
            : roll < 0.85
              ? call(url, user.token, 'PATCH', `messages/${user.owned[n % user.owned.length]}`, { n })
              : call(url, user.token, 'DELETE', `messages/${user.owned.shift()}`)
        ).catch(() => undefined)
        if (answer?.status === 201) user.owned.push(String(answer.body.id))
        await sleep(10)
      }
    })
  )
}

/** Each watch's list against a fresh `find` by its user, polled until equal or 10 s: the ones that never matched. */
async function divergences(users: User[]): Promise<string[]> {
  const deadline = Date.now() + 10_000
  const checks = users.flatMap((user, u) =>
    user.watches.map(async (watch, q) => {
      for (;;) {
        const result = (await user.client.service('messages').find({ query: QUERIES[q] })) as Record<string, unknown>[]
        const expected = JSON.stringify(Array.isArray(result) ? result : (result as { data: unknown }).data)
        if (JSON.stringify(watch.list) === expected) return []
        if (Date.now() > deadline) return [`user ${u} ${JSON.stringify(QUERIES[q])}`]
        await sleep(100)
      }
    })
  )
  return (await Promise.all(checks)).flat()
}

const percentiles = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
  return `n ${sorted.length}, p50 ${at(50)}, p90 ${at(90)}, max ${sorted.at(-1) ?? NaN} ms`
}

withServer('live queries: resuming on the other PostgreSQL instance after a cut, under writes', () => {
  it(`resumes every watch in ${ROUNDS} cuts, no reset, lists equal to find (prints the times)`, async () => {
    const url = await database!.fresh()
    const env = { STORE: 'postgres', POSTGRES_URL: url }
    const a = await instances!.start(env)
    const b = await instances!.start(env)
    const users: User[] = []
    const on: Instance[] = []
    for (let u = 0; u < USERS; u++) {
      const email = `resume${u}@x.io`
      const token = await signUp(a.url, email)
      const proxy = await startTcpProxy('127.0.0.1', portOf(a))
      proxies.push(proxy)
      users.push(await connectUser(email, proxy, token))
      on.push(a)
    }
    const resets: string[] = []
    for (const user of users) for (const watch of user.watches) watch.on('reset', () => resets.push('reset'))
    for (const user of users) for (const watch of user.watches) watch.on('error', () => undefined)

    writing = true
    const writes = writeWhile(users, [a, b])
    await sleep(1000)
    const reconnects: number[] = []
    const answers: number[] = []
    const totals: number[] = []
    const unresumed: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const u = round % USERS
      const user = users[u]!
      on[u] = on[u] === a ? b : a
      proxies[u]!.retarget(portOf(on[u]!))
      const cut = Date.now()
      user.socket.io.engine.close()
      // Resumed: a resume of each watch sent after the cut was answered (a timed-out one is sent again).
      const resumed = () => user.resumes.filter((r) => r.sent >= cut && r.answered !== undefined).length >= 2
      for (const end = Date.now() + 30_000; !resumed() && Date.now() < end;) await sleep(10)
      if (!resumed()) unresumed.push(round)
      const mine = user.resumes.filter((r) => r.sent >= cut)
      reconnects.push((user.connects.find((at) => at >= cut) ?? NaN) - cut)
      for (const r of mine) if (r.answered !== undefined) answers.push(r.answered - r.sent)
      totals.push(Math.max(...mine.map((r) => r.answered ?? NaN)) - cut)
      await sleep(200 + Math.floor(Math.random() * 300))
    }
    writing = false
    await writes
    const timedOut = users.flatMap((user) => user.resumes.filter((r) => r.failed !== undefined)).length
    process.stderr.write(
      `live resume on PostgreSQL, ${ROUNDS} cuts, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' / ')}:\n  cut → reconnected: ${percentiles(reconnects)}\n  resume answered: ${percentiles(
        answers
      )}\n  cut → both watches resumed: ${percentiles(totals)}\n  resumes timed out and sent again: ${timedOut}\n`
    )
    expect(unresumed).toEqual([])
    expect(resets).toEqual([])
    expect(await divergences(users)).toEqual([])
    await a.stop()
    await b.stop()
  }, 300_000)
})
