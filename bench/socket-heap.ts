/**
 * `npm run bench:socket-heap`: what each authenticated socket keeps on the server's heap, object by
 * object. A server of bench:scale (bench/support/scale-server.ts: plumage as `npm start` serves it on
 * memory, the Feathers v5 reference app, or a bare socket.io server) gets WARMUP sockets first (so
 * code compiled and tables grown once are not counted), then a V8 heap snapshot after a full GC,
 * SOCKETS more sockets, and a second snapshot. The growth of each kind of object (V8's node type and
 * constructor or function name: self sizes, not retained ones, so nothing is counted twice) divided
 * by SOCKETS is what one socket holds; with the heap growth (`heapUsed` after a full GC) beside it.
 * The clients (socket.io-client over websocket, logging in with `create authentication`, strategy
 * jwt, as bench:scale's) live in this process, so the server's heap holds only the server's side.
 * Heap figures do not depend on the machine's load. SCALE_SERVERS picks the servers (plumage,
 * feathers, socketio), TOP the number of rows; KEEP_SNAPSHOTS=1 keeps the two snapshots (their paths are printed),
 * to open in Chrome's DevTools (Memory, Comparison).
 */
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { io as connectClient, type Socket } from 'socket.io-client'
import { ScaleServer } from './support/scale-server-process.js'

const SOCKETS = Number(process.env.SOCKETS ?? 1000)
const WARMUP = Number(process.env.WARMUP ?? 100)
const TOP = Number(process.env.TOP ?? 30)
const SERVERS = (process.env.SCALE_SERVERS ?? 'plumage,feathers,socketio').split(',')
const CONCURRENCY = 20
const here = dirname(fileURLToPath(import.meta.url))

interface Kind {
  count: number
  size: number
}

/** Counts and self sizes of a heap snapshot's nodes by `<type> <name>` (strings and numbers by type alone). */
function kinds(file: string): Map<string, Kind> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }
    nodes: number[]
    strings: string[]
  }
  const fields = snapshot.snapshot.meta.node_fields
  const types = snapshot.snapshot.meta.node_types[0]
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field))
  const byName = new Set(['object', 'closure', 'native', 'hidden', 'object shape', 'code'])
  const found = new Map<string, Kind>()
  const { nodes, strings } = snapshot
  for (let i = 0; i < nodes.length; i += fields.length) {
    const type = types[nodes[i + typeAt!]!]!
    const name = byName.has(type) ? `${type} ${strings[nodes[i + nameAt!]!]!.slice(0, 60)}` : type
    const kind = found.get(name) ?? { count: 0, size: 0 }
    kind.count++
    kind.size += nodes[i + sizeAt!]!
    found.set(name, kind)
  }
  return found
}

function open(url: string, token: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectClient(url, { transports: ['websocket'], forceNew: true, reconnection: false })
    socket.once('connect_error', reject)
    socket.once('connect', () =>
      socket.emit('create', 'authentication', { strategy: 'jwt', accessToken: token }, {}, (error: unknown) =>
        error ? reject(new Error(`login failed: ${JSON.stringify(error)}`)) : resolve(socket)
      )
    )
  })
}

async function openMany(url: string, token: string, count: number, into: Socket[]): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next++ < count) into.push(await open(url, token))
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
}

const kb = (bytes: number) => (bytes / 1024).toFixed(2)

for (const kind of SERVERS) {
  const server = new ScaleServer(here, kind)
  const { url, token } = await server.started
  const sockets: Socket[] = []
  await openMany(url, token, WARMUP, sockets)
  const files = [join(tmpdir(), `socket-heap-${kind}-${process.pid}-a.heapsnapshot`)]
  files.push(files[0]!.replace('-a.', '-b.'))
  const heap = async () => (await server.ask<{ heapUsed: number }>('stats')).heapUsed
  const heapBefore = await heap()
  await server.ask('snapshot', { file: files[0] })
  await openMany(url, token, SOCKETS, sockets)
  const heapAfter = await heap()
  await server.ask('snapshot', { file: files[1] })
  for (const socket of sockets) socket.disconnect()
  await server.stop()
  const [before, after] = files.map(kinds)
  if (process.env.KEEP_SNAPSHOTS === undefined) for (const file of files) rmSync(file)
  else console.log(`snapshots kept: ${files.join(' ')}`)
  const growth = [...after!]
    .map(([name, { count, size }]) => {
      const was = before!.get(name) ?? { count: 0, size: 0 }
      return { name, count: (count - was.count) / SOCKETS, size: (size - was.size) / SOCKETS }
    })
    .sort((a, b) => b.size - a.size)
  const total = growth.reduce((sum, { size }) => sum + size, 0)
  console.log(
    `\n${kind}: ${kb((heapAfter - heapBefore) / SOCKETS)} KB of heap per socket (heapUsed), ` +
      `${kb(total)} KB in the snapshots' objects (${SOCKETS} sockets after ${WARMUP})`
  )
  console.log('  bytes/socket  objects/socket  kind')
  for (const { name, count, size } of growth.slice(0, TOP))
    console.log(`  ${size.toFixed(0).padStart(12)}  ${count.toFixed(2).padStart(14)}  ${name}`)
}
process.exit(0)
