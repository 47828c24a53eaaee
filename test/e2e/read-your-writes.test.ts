import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { io, type Socket } from 'socket.io-client'
import { createClient, readYourWrites, rest, socketio, WriteFence, type ClientApp } from '../../src/library/client.js'
import { builtInstances, signUp, type Instance, type Instances } from '../support/app-instances.js'
import { discoverPostgres } from '../support/postgres-server.js'
import { discoverRethinkDb } from '../support/rethinkdb-server.js'
import { slowLink } from '../support/slow-link.js'

/*
 * Read your writes with real processes (issue 40): a client writes through one instance and its live query and
 * subscription sit on another instance's socket — behind a slow link (150 ms), so that a write that did not wait
 * for them resolves before they show it. With the fence every write resolves with its record already in the live
 * list and heard by the subscription, whichever instance it went through (socket or REST); with the fence off the
 * same write resolves first. On memory (one instance: memory stores are per process), on PostgreSQL and on
 * RethinkDB (two instances on one database: the event reaches the watching instance through the log).
 */
const database = await discoverPostgres()
if (!database) process.stderr.write('SKIPPED: read your writes on PostgreSQL (no PostgreSQL server and no binaries)\n')
// Without a server discoverRethinkDb prints its own loud SKIPPED line.
const rethinkdb = await discoverRethinkDb()
const LINK_MS = 150
const WRITES = 8

let instances: Instances
const sockets: Socket[] = []
beforeAll(async () => {
  instances = await builtInstances('read-your-writes')
}, 60_000)
afterAll(async () => {
  for (const socket of sockets) socket.disconnect()
  await instances?.cleanup()
  await database?.stop()
  await rethinkdb?.stop()
})

function socketOf(instance: Instance, token: string): Socket {
  const socket = io(instance.url, {
    transports: ['websocket'],
    forceNew: true,
    extraHeaders: { Authorization: `Bearer ${token}` }
  })
  sockets.push(socket)
  return socket
}

interface Views {
  fence: WriteFence
  watched: () => string[]
  heard: string[]
  writers: ClientApp[]
}

/** The watching client (slow link to `watching`) and two writers (socket and REST) to `writing`, one fence. */
async function views(watching: Instance, writing: Instance, token: string, tag: string): Promise<Views> {
  const fence = new WriteFence()
  const watcher = createClient()
    .configure(socketio(slowLink(socketOf(watching, token), LINK_MS)))
    .configure(readYourWrites({ fence }))
  const watch = watcher.service('messages').watch({ query: { tag, $sort: { n: 1 } } })
  await watch.ready
  const heard: string[] = []
  watcher.service('messages').on('created', (data: unknown) => {
    const message = data as { text: string; tag?: string }
    if (message.tag === tag) heard.push(message.text)
  })
  const socketWriter = createClient()
    .configure(socketio(socketOf(writing, token)))
    .configure(readYourWrites({ fence }))
  const headers = { Authorization: `Bearer ${token}` }
  const restWriter = createClient()
    .configure(rest(writing.url).fetch(fetch, { headers }))
    .configure(readYourWrites({ fence }))
  return {
    fence,
    watched: () => (watch.list as { text: string }[]).map((message) => message.text),
    heard,
    writers: [socketWriter, restWriter]
  }
}

/** Writes in turn through each writer; after each resolves, what the views show of it. */
async function writeAndLook(setup: Views, prefix: string): Promise<{ shown: number; heard: number }> {
  let shown = 0
  let heard = 0
  for (let n = 0; n < WRITES; n++) {
    const text = `${prefix} ${n}`
    await setup.writers[n % 2]!.service('messages').create({ text, tag: prefixTag(prefix), n })
    if (setup.watched().includes(text)) shown++
    if (setup.heard.includes(text)) heard++
  }
  return { shown, heard }
}
const prefixTag = (prefix: string) => prefix.split(' ')[0]!

async function checkFence(watching: Instance, writing: Instance, token: string, tag: string): Promise<void> {
  const setup = await views(watching, writing, token, tag)
  expect(await writeAndLook(setup, `${tag} fenced`)).toEqual({ shown: WRITES, heard: WRITES })
  setup.fence.enabled = false
  const unfenced = await writeAndLook(setup, `${tag} unfenced`)
  // Without the fence the slow link shows: the writes resolve before the views have them.
  expect(unfenced.shown).toBeLessThan(WRITES)
  expect(unfenced.heard).toBeLessThan(WRITES)
}

describe('read your writes with real processes', () => {
  it('memory: writes over socket and REST resolve once the live query and the subscription on a slow socket show them', async () => {
    const instance = await instances.start({ STORE: 'memory' })
    const token = await signUp(instance.url, 'memory@x.io')
    await checkFence(instance, instance, token, 'mem')
    await instance.stop()
  }, 60_000)

  const withServer = database ? it : it.skip
  withServer(
    'PostgreSQL, two instances: writes through A resolve once the views on B show them',
    async () => {
      const url = await database!.fresh()
      const env = { STORE: 'postgres', POSTGRES_URL: url }
      const a = await instances.start(env)
      const b = await instances.start(env)
      const token = await signUp(a.url, 'pg@x.io')
      await checkFence(b, a, token, 'pgab')
      // And the other way round, with the views on the instance that wrote.
      await checkFence(a, a, token, 'pgaa')
      await a.stop()
      await b.stop()
    },
    90_000
  )

  const withRethinkDb = rethinkdb ? it : it.skip
  withRethinkDb(
    'RethinkDB, two instances: writes through A resolve once the views on B show them',
    async () => {
      const url = `rethinkdb://${rethinkdb!.host}:${rethinkdb!.port}/${rethinkdb!.db}_ryw`
      const a = await instances.start({ STORE: 'rethinkdb', RETHINKDB_URL: url })
      const b = await instances.start({ STORE: 'rethinkdb', RETHINKDB_URL: url })
      const token = await signUp(a.url, 'rdb@x.io')
      await checkFence(b, a, token, 'rdbab')
      // And the other way round, with the views on the instance that wrote.
      await checkFence(a, a, token, 'rdbaa')
      await a.stop()
      await b.stop()
    },
    90_000
  )
})
