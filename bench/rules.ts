/**
 * `npm run bench:rules`: what rules cost when events fan out. RULES_SOCKETS sockets (default 10,000) are logged in as
 * RULES_USERS different users (default 500: user i % users on socket i, so as many distinct abilities), and the
 * server creates a stream of RULES_CREATES messages, one after another, by user i % users, every RULES_DIRECT_EVERY-th
 * (default 5th) a direct message to the next user: with rules, a public message goes to every socket and a direct
 * one to the sockets of its author and recipient only. Measured: the server's CPU (process.cpuUsage, user +
 * system) from the stream's start until the clients hold every event it caused, per delivered event.
 *
 * Rows (each server in its own process, bench/support/rules-server.ts; the sockets in RULES_CLIENT_PROCESSES other
 * processes, this file with `--clients`; everything on 127.0.0.1):
 * - plumage with rules: the reference app as `npm start` serves it, with the reference chat's rules (a probe tells:
 *   user 2 must not find a direct message from user 0 to user 1);
 * - plumage without rules: the same app without its rules module (`buildContainer(config, { modules })`);
 * - Feathers v5 + feathers-casl: the same rules as CASL abilities, `getChannelsWithReadAbility` as the publisher.
 * As in
 * bench/socket.ts, rounds are interleaved (the order rotates every round) and medians over RULES_ROUNDS (default 3)
 * are compared. Goals: plumage with rules ≤ 1.2× the CPU per event of plumage without rules and ≤ 0.33× of
 * Feathers + feathers-casl. A quick run: RULES_SOCKETS=1000 RULES_USERS=50 RULES_ROUNDS=1.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { availableParallelism, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { io as connectClient, type Socket } from 'socket.io-client'
import { printTable, writeResults } from './support/measure.js'
import { children, median } from './support/scale-server-process.js'

const SOCKETS = Number(process.env.RULES_SOCKETS ?? 10_000)
const USERS = Number(process.env.RULES_USERS ?? 500)
const CREATES = Number(process.env.RULES_CREATES ?? 200)
const DIRECT_EVERY = Number(process.env.RULES_DIRECT_EVERY ?? 5)
const ROUNDS = Number(process.env.RULES_ROUNDS ?? 3)
const CLIENT_PROCESSES = Number(process.env.RULES_CLIENT_PROCESSES ?? 2)
const CONNECT_CONCURRENCY = 50
const TIMEOUT_MS = Number(process.env.RULES_TIMEOUT_MS ?? 300_000)
const here = dirname(fileURLToPath(import.meta.url))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Message = Record<string, unknown> & { type: string }

/** A client process: sockets logged in with the tokens it is given; counts the `messages created` it receives. */
function clientProcess(): void {
  const sockets: Socket[] = []
  let received = 0
  const open = (url: string, token: string) =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connectClient(url, { transports: ['websocket'], forceNew: true, reconnection: false })
      socket.on('messages created', () => received++)
      socket.once('connect_error', reject)
      socket.once('connect', () =>
        socket.emit('create', 'authentication', { strategy: 'jwt', accessToken: token }, {}, (error: unknown) =>
          error ? reject(new Error(`login failed: ${JSON.stringify(error)}`)) : resolve(socket)
        )
      )
    })
  process.on('message', (message: Message) => {
    if (message.type === 'connect') {
      const tokens = message.tokens as string[]
      let next = 0
      const worker = async () => {
        while (next < tokens.length) sockets.push(await open(message.url as string, tokens[next++]!))
      }
      void Promise.all(Array.from({ length: CONNECT_CONCURRENCY }, worker)).then(
        () => process.send!({ type: 'connected' }),
        (error: Error) => process.send!({ type: 'failed', error: error.message })
      )
    } else if (message.type === 'count') process.send!({ type: 'count', received })
  })
  process.send!({ type: 'ready' })
}

/** A forked process: the servers answer `{ id, type }` with `{ id, value }`, the clients send typed messages. */
function forked(file: string, args: string[], env: Record<string, string>): ChildProcess {
  // The servers load feathers-casl, which gets CASL 6 (bench/support/casl-6.mjs; plumage's own imports keep CASL 7).
  const casl6 = join(here, '..', '..', 'bench', 'support', 'casl-6.mjs')
  const execArgv = env.RULES_SERVER === undefined ? [] : ['--import', casl6]
  const child = fork(file, args, {
    env: { ...process.env, ...env },
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  children.add(child)
  return child
}

function next<T>(child: ChildProcess, accept: (message: any) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no answer in time')), TIMEOUT_MS)
    const listener = (message: unknown) => {
      const value = accept(message)
      if (value === undefined) return
      clearTimeout(timer)
      child.off('message', listener)
      resolve(value)
    }
    child.on('message', listener)
  })
}

let asked = 1
async function ask<T>(server: ChildProcess, type: string, fields: object = {}): Promise<T> {
  const id = asked++
  const answer = next(server, (message: { id: number; value: T }) =>
    message.id === id ? { v: message.value } : undefined
  )
  server.send({ id, type, ...fields })
  return (await answer).v
}

interface Run {
  rules: boolean
  cpuPerEventUs: number
  events: number
}

/** The events the stream causes: public ones reach every socket; with rules, direct ones their two users' sockets. */
function expectedEvents(rules: boolean, creates: number): number {
  let total = 0
  for (let i = 0; i < creates; i++) {
    const direct = i % DIRECT_EVERY === DIRECT_EVERY - 1
    const socketsOf = (user: number) => Math.floor(SOCKETS / USERS) + (user < SOCKETS % USERS ? 1 : 0)
    total += direct && rules ? socketsOf(i % USERS) + socketsOf((i + 1) % USERS) : SOCKETS
  }
  return total
}

/** One server: its sockets connected, a warm-up stream, then the measured one. */
async function measure(kind: string): Promise<Run> {
  const server = forked(join(here, 'support', 'rules-server.mjs'), [], {
    RULES_SERVER: kind,
    RULES_USERS: String(USERS),
    NODE_ENV: 'production'
  })
  const clients: ChildProcess[] = []
  try {
    await next(server, (message: { id: number }) => (message.id === 0 ? true : undefined))
    const { url, tokens, rules } = await ask<{ url: string; tokens: string[]; rules: boolean }>(server, 'setup')
    for (let p = 0; p < CLIENT_PROCESSES; p++) clients.push(forked(fileURLToPath(import.meta.url), ['--clients'], {}))
    await Promise.all(clients.map((child) => next(child, (m: Message) => (m.type === 'ready' ? true : undefined))))
    const connected = clients.map((child) =>
      next(child, (m: Message) => (m.type === 'connected' ? true : m.type === 'failed' ? m.error : undefined))
    )
    clients.forEach((child, p) => {
      const mine = Array.from({ length: SOCKETS }, (_, i) => i).filter((i) => i % CLIENT_PROCESSES === p)
      child.send({ type: 'connect', url, tokens: mine.map((i) => tokens[i % USERS]) })
    })
    for (const result of await Promise.all(connected)) if (result !== true) throw new Error(String(result))
    const counted = async () => {
      const counts = await Promise.all(
        clients.map((child) => {
          const answer = next(child, (m: Message) => (m.type === 'count' ? (m.received as number) : undefined))
          child.send({ type: 'count' })
          return answer
        })
      )
      return counts.reduce((sum, count) => sum + count, 0)
    }
    const stream = async (creates: number) => {
      const target = (await counted()) + expectedEvents(rules, creates)
      await ask(server, 'stream', { creates, directEvery: DIRECT_EVERY })
      const deadline = Date.now() + TIMEOUT_MS
      for (let count = await counted(); count < target; count = await counted()) {
        if (Date.now() > deadline) throw new Error(`${kind}: ${count} events arrived of ${target} (rules: ${rules})`)
        await sleep(20)
      }
    }
    await stream(Math.max(DIRECT_EVERY, Math.floor(CREATES / 10)))
    const before = await ask<NodeJS.CpuUsage>(server, 'cpu')
    await stream(CREATES)
    const after = await ask<NodeJS.CpuUsage>(server, 'cpu')
    const events = expectedEvents(rules, CREATES)
    return { rules, events, cpuPerEventUs: (after.user - before.user + after.system - before.system) / events }
  } finally {
    for (const child of [server, ...clients]) child.kill('SIGKILL')
  }
}

const ROWS = { plain: 'plumage without rules', rules: 'plumage with rules', casl: 'Feathers v5 + feathers-casl' }

async function main(): Promise<void> {
  if (USERS < 3 || SOCKETS < USERS) throw new Error('RULES_USERS must be at least 3 and at most RULES_SOCKETS')
  console.log(
    `${SOCKETS} sockets over ${USERS} users, ${CREATES} creates (every ${DIRECT_EVERY}th direct), ${ROUNDS} rounds; ` +
      `load per core ${(loadavg()[0]! / availableParallelism()).toFixed(2)}`
  )
  const results: Record<string, number[]> = { [ROWS.plain]: [], [ROWS.rules]: [], [ROWS.casl]: [] }
  const kinds = ['plumage', 'plumage-plain', 'feathers-casl']
  for (let round = 0; round < ROUNDS; round++) {
    // The order rotates every round, so that no row always runs first or last.
    for (const kind of [...kinds.slice(round % 3), ...kinds.slice(0, round % 3)]) {
      const run = await measure(kind)
      const row = kind === 'feathers-casl' ? ROWS.casl : kind === 'plumage' ? ROWS.rules : ROWS.plain
      // The probe must agree: a server that applies no rules when it should (or the other way) is a bug, not a row.
      if (kind !== 'feathers-casl' && run.rules !== (kind === 'plumage'))
        throw new Error(`${row}: the probe says it ${run.rules ? 'applies' : 'does not apply'} rules`)
      results[row]!.push(run.cpuPerEventUs)
      console.log(`round ${round + 1}: ${row}: ${run.cpuPerEventUs.toFixed(2)} µs per event (${run.events} events)`)
    }
  }
  const cpu = (row: string) => (results[row]!.length > 0 ? median(results[row]!) : NaN)
  const rows = Object.values(ROWS).map((row) => ({
    server: row,
    'CPU µs per delivered event': cpu(row),
    'vs plumage without rules ratio': cpu(row) / cpu(ROWS.plain),
    'vs feathers-casl ratio': cpu(row) / cpu(ROWS.casl)
  }))
  printTable('Server CPU per delivered event — goals: with rules ≤ 1.2× without, ≤ 0.33× feathers-casl', rows)
  writeResults('rules', rows)
}

if (process.argv.includes('--clients')) clientProcess()
else
  await main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error)
      process.exit(1)
    }
  )
