import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Socket } from 'socket.io-client'
import type { LiveWatch } from '../../../src/interfaces/client/live-watch.js'
import type { AuthServer } from '../../support/auth-server.js'
import { connectSocket, signup, startReferenceServer } from '../../support/reference-server.js'
import { watcher } from './oracle-harness.js'

/*
 * Progress frames over the wire (docs/wire-protocol.md, Live queries): a quiet watch of plumage's client, its
 * connection lagging by 2,000 events, is sent `["live", { offset }]` and takes that offset as its own — so a resume
 * after a drop starts there, not at its answer's offset, which the event history may have let go by then.
 */
const LAG = 2_000
let server: AuthServer
const sockets: Socket[] = []

beforeAll(async () => {
  server = await startReferenceServer({})
})
afterAll(async () => {
  for (const socket of sockets) socket.disconnect()
  await server.close()
})

describe('progress frames over socket.io', () => {
  it("move a quiet watch's offset to the head its connection was told", async () => {
    const session = await signup(server.url, 'progress@example.com')
    const writer = await connectSocket(server.url, session.token)
    const { socket, client } = watcher(server.url, session.token)
    sockets.push(writer, socket)
    const progress: string[] = []
    socket.on('live', (frame: { id?: string; offset?: string }) => {
      if (frame.id === undefined && frame.offset !== undefined) progress.push(frame.offset)
    })
    const messages = client.service('messages') as unknown as { watch(options: object): LiveWatch<object> }
    const watch = messages.watch({ query: { text: 'never written' } })
    await watch.ready
    const answered = watch.offset
    const create = (n: number) =>
      new Promise((resolve) => writer.emit('create', 'messages', { text: `m${n}` }, resolve))
    for (let n = 0; n <= LAG; n += 50) await Promise.all(Array.from({ length: 50 }, (_, i) => create(n + i)))
    const deadline = Date.now() + 5_000
    while (progress.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(progress).toHaveLength(1)
    expect(watch.list).toEqual([])
    expect(watch.offset).toBe(progress[0])
    expect(watch.offset).not.toBe(answered)
  }, 60_000)
})
