import { expect } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import { buildServer, type BuiltServer } from './built-server.js'
import type { InstanceSettings } from '../../src/testing/index.js'
import { connect, emitAck } from '../interfaces/socketio/support.js'

// The kit's helpers of the multi-instance contract, for the suites that drive instances themselves.
export { call, PASSWORD, signUp } from '../../src/testing/instances/instance-calls.js'

/*
 * Several instances of the built server (`node dist/plumage.mjs`, as `npm start` runs it), each a
 * real process, on one RethinkDB database; authenticated socket.io clients on each; and a recorder
 * that counts every event a client received, for exactly-once checks.
 */

export const INSTANCE_SECRET = 'several-instances-share-this-secret'

export interface Instance {
  url: string
  pid: number
  /** Every JSON log line the instance wrote so far (drained continuously: a full pipe would block it). */
  logs: { level: number; msg: string; [key: string]: unknown }[]
  /** SIGTERM, then resolves with the exit code. */
  stop(): Promise<number | null>
  /** SIGKILL: gone without a shutdown. */
  kill(): void
}

export interface Instances {
  start(env: Record<string, string>): Promise<Instance>
  cleanup(): Promise<void>
}

export async function builtInstances(name: string): Promise<Instances> {
  const built: BuiltServer = await buildServer(name)
  return {
    async start(env) {
      const started = await built.start({
        STORE: 'rethinkdb',
        AUTH_SECRET: INSTANCE_SECRET,
        BCRYPT_ROUNDS: '4',
        LOG_LEVEL: 'info',
        ...env
      })
      const logs: Instance['logs'] = started.startup.map((line) => JSON.parse(line) as Instance['logs'][number])
      void (async () => {
        for (let line = await started.logs.next(); !line.done; line = await started.logs.next()) {
          try {
            logs.push(JSON.parse(line.value) as Instance['logs'][number])
          } catch {
            // Not a log line.
          }
        }
      })()
      return {
        url: `http://127.0.0.1:${started.port}`,
        pid: started.child.pid!,
        logs,
        stop: async () => {
          if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGTERM')
          return started.exited
        },
        kill: () => void started.child.kill('SIGKILL')
      }
    },
    cleanup: () => built.cleanup()
  }
}

/** The environment of an instance the multi-instance contract starts with these settings. */
export function settingsEnv(settings: InstanceSettings = {}): Record<string, string> {
  const { recoveryWindowSeconds } = settings
  return recoveryWindowSeconds === undefined ? {} : { SOCKET_RECOVERY_WINDOW: String(recoveryWindowSeconds) }
}

/** A socket.io client logged in with a JWT, recording every `messages` event it receives. */
export interface Listener {
  socket: Socket
  url: string
  /** `${event} ${id}` → how many times it arrived. */
  counts: Map<string, number>
  received: { event: string; data: Record<string, unknown> }[]
}

export async function listen(url: string, accessToken: string): Promise<Listener> {
  const socket = await connect(url)
  const [error] = await emitAck(socket, 'create', 'authentication', { strategy: 'jwt', accessToken }, {})
  if (error) throw new Error(`socket login on ${url} failed: ${JSON.stringify(error)}`)
  const listener: Listener = { socket, url, counts: new Map(), received: [] }
  for (const event of ['created', 'updated', 'patched', 'removed', 'archived']) {
    socket.on(`messages ${event}`, (data: Record<string, unknown>) => {
      listener.received.push({ event, data })
      const key = `${event} ${String(data.id)}`
      listener.counts.set(key, (listener.counts.get(key) ?? 0) + 1)
    })
  }
  return listener
}

/** Polls a condition every 100 ms until it holds or `ms` pass; fails with `what` otherwise. */
export async function until(what: string, condition: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${what}: not within ${ms / 1000} s`)
}

/**
 * Checks that every listener received exactly the expected events (`${event} ${id}`), each once,
 * and nothing else (with `allowCreatedOthers`: other `created` events may come, also only once). Waits for all to
 * arrive, then a little longer so that doubles would show.
 */
export async function expectExactlyOnce(
  listeners: Listener[],
  expected: string[],
  { settleMs = 2_000, allowCreatedOthers = false } = {}
): Promise<void> {
  const want = new Set(expected)
  await until(
    `every listener receives ${expected.length} events`,
    () => listeners.every((listener) => [...want].every((key) => listener.counts.has(key))),
    45_000
  )
  await new Promise((resolve) => setTimeout(resolve, settleMs))
  for (const listener of listeners) {
    const doubled = [...listener.counts].filter(([, count]) => count > 1).map(([key, count]) => `${key} ×${count}`)
    // A write cut off by a crash may have been applied though its caller heard 503: it may appear (once).
    const unexpected = [...listener.counts.keys()].filter(
      (key) => !want.has(key) && !(allowCreatedOthers && key.startsWith('created '))
    )
    const missing = expected.filter((key) => !listener.counts.has(key))
    expect({ url: listener.url, doubled, unexpected, missing }).toEqual({
      url: listener.url,
      doubled: [],
      unexpected: [],
      missing: []
    })
  }
}
