import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { io, type Socket } from 'socket.io-client'
import { Timeout } from '../../../src/domain/errors/errors.js'
import { createClient, socketio } from '../../../src/library/client.js'
import type { AuthServer } from '../../support/auth-server.js'
import { parseExposition, samplesOf } from '../../support/prometheus-text.js'
import { connectSocket, signup, startReferenceServer, type Session } from '../../support/reference-server.js'
import { call, findRecords, until } from './live-client.js'

/** The client's request timeout here; a slowed read takes longer, so the first answer comes after it. */
const TIMEOUT_MS = 1200
const SLOW_MS = 2000

/*
 * Issue 39, a watch whose answer comes after the client's timeout: the server still completes it, so it holds a
 * watch the client does not know. plumage's client unwatches such a late answer, so no server watch outlives the
 * client's interest, and the client's retry is the one watch left. A real server (memory, recovery and metrics on);
 * the messages' `find` — a view's read — is slowed by a hook for the reads the test asks for.
 */
describe("live queries: a watch answered after the client's timeout", () => {
  let server: AuthServer
  let alice: Session
  let writer: Socket
  const sockets: Socket[] = []
  /** How many of the next `find`s of messages take SLOW_MS. */
  let slowReads = 0

  const gauge = async (name: string) => {
    const text = await (await fetch(`${server.url}/metrics`)).text()
    return samplesOf(parseExposition(text), name)[0]?.value
  }
  const watching = async () => ({
    views: await gauge('plumage_live_views'),
    watches: await gauge('plumage_live_watches')
  })
  const settlesAt = async (views: number, watches: number) => {
    const expected = JSON.stringify({ views, watches })
    await until(async () => JSON.stringify(await watching()) === expected, 3 * SLOW_MS)
    return watching()
  }
  const clientOf = () => {
    const socket = io(server.url, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      extraHeaders: { Authorization: `Bearer ${alice.token}` }
    })
    sockets.push(socket)
    return { socket, client: createClient().configure(socketio(socket, { timeout: TIMEOUT_MS })) }
  }

  beforeAll(async () => {
    // Views are not kept after their last watch: a resume's read is slowed like a first watch's.
    server = await startReferenceServer({ LIVE_KEEP_VIEWS: '0' })
    server.app.service('messages').hooks({
      before: {
        find: [
          async () => {
            if (slowReads <= 0) return
            slowReads--
            await new Promise((resolve) => setTimeout(resolve, SLOW_MS))
          }
        ]
      }
    })
    alice = await signup(server.url, 'alice@example.com')
    writer = await connectSocket(server.url, alice.token)
    sockets.push(writer)
    for (const text of ['one', 'two']) await call(writer, 'create', 'messages', { text, tag: 'late' })
  })

  afterAll(async () => {
    for (const socket of sockets) socket.disconnect()
    await server?.close()
  })

  const query = { tag: 'late', $sort: { id: -1 }, $limit: 5 }

  it('leaves no server watch when the first answer is late, and a second watch works', async () => {
    const { client } = clientOf()
    slowReads = 1
    const late = client.service('messages').watch({ query })
    await expect(late.ready).rejects.toBeInstanceOf(Timeout)
    // The server is still reading: its watch is there until its answer arrives and the client unwatches it.
    expect(await watching()).toEqual({ views: 1, watches: 1 })
    expect(await settlesAt(0, 0)).toEqual({ views: 0, watches: 0 })

    const again = client.service('messages').watch({ query })
    expect((await again.ready).map((m) => m.text)).toEqual(['two', 'one'])
    expect(await watching()).toEqual({ views: 1, watches: 1 })
    await again.unwatch()
    expect(await settlesAt(0, 0)).toEqual({ views: 0, watches: 0 })
  })

  it('leaves one server watch when a resume is late: the retry resumes, the late one is unwatched', async () => {
    const { socket, client } = clientOf()
    const query = { tag: 'late', $sort: { id: -1 }, $limit: 4 }
    const watch = client.service('messages').watch({ query })
    await watch.ready
    const errors: unknown[] = []
    watch.on('error', (error) => errors.push(error))
    const resets: unknown[] = []
    watch.on('reset', (reset) => resets.push(reset))

    // Cut; a write meanwhile; the resume's read (a new view: the old one left with the socket) is slow.
    const gone = new Promise<void>((resolve) => socket.once('disconnect', () => resolve()))
    socket.io.engine.close()
    await gone
    await call(writer, 'create', 'messages', { text: 'three', tag: 'late' })
    slowReads = 1
    socket.connect()

    // The first resume times out; the retry joins the view being read and is answered; the late one is unwatched.
    expect(await until(() => watch.list.length === 3, 4 * SLOW_MS)).toBe(true)
    expect(errors[0]).toBeInstanceOf(Timeout)
    expect(resets).toEqual([])
    expect(watch.list.map((m) => m.text)).toEqual(['three', 'two', 'one'])
    // Before: the view read for the first and the retry, holding both watches (one for good, without the unwatch).
    expect(await settlesAt(1, 1)).toEqual({ views: 1, watches: 1 })

    // Live, as the one watch.
    await call(writer, 'create', 'messages', { text: 'four', tag: 'late' })
    const expected = JSON.stringify(await findRecords(writer, 'messages', query))
    expect(await until(() => JSON.stringify(watch.list) === expected)).toBe(true)
    await watch.unwatch()
    expect(await settlesAt(0, 0)).toEqual({ views: 0, watches: 0 })
  })
})
