import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import authClientModule from '@feathersjs/authentication-client'
import { feathers } from '@feathersjs/feathers'
import socketioClientModule from '@feathersjs/socketio-client'
import { io, type Socket } from 'socket.io-client'
import type { Clock } from '../../src/domain/clock.js'
import { createClient } from '../../src/interfaces/client/client-app.js'
import { socketio } from '../../src/interfaces/client/socket/socketio-transport.js'
import { AUTH_SECRET, startAuthServer, type AuthServer } from '../support/auth-server.js'
import { call, receivedUntil as until, request, signup, type Session } from '../support/reference-server.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/*
 * socket.io connection state recovery with the official clients, unchanged (socket.io-client, and
 * @feathersjs/socketio-client with the authentication client over it), against the reference app
 * on the memory store. The clients reach the server through a TCP proxy the test cuts: both ends
 * see the connection drop, as with a network failure, while another user keeps writing over REST.
 */

const socketioClient = socketioClientModule.default
const authClient = authClientModule.default
type FeathersSocket = Parameters<typeof socketioClient>[0]

/** The system clock, moved forward by hand to pass the recovery window without waiting for it. */
class SkewedClock implements Clock {
  skew = 0
  now(): number {
    return Date.now() + this.skew
  }
}

const WINDOW_SECONDS = 30

interface Received {
  texts: string[]
  offsets: unknown[]
}

describe('socket connection state recovery', () => {
  let server: AuthServer
  let proxy: TcpProxy
  let writer: Session
  const clock = new SkewedClock()
  const sockets: Socket[] = []
  let users = 0

  beforeAll(async () => {
    server = await startAuthServer(
      { AUTH_SECRET, BCRYPT_ROUNDS: '4', SOCKET_RECOVERY_WINDOW: String(WINDOW_SECONDS) },
      { clock }
    )
    proxy = await startTcpProxy('127.0.0.1', Number(new URL(server.url).port))
    writer = await signup(server.url, 'writer@example.com')
  })
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.disconnect()
    await proxy.restore()
  })
  afterAll(async () => {
    await proxy.close()
    await server.close()
  })

  const proxied = () => `http://127.0.0.1:${proxy.port}`

  /** A socket through the proxy that reconnects by itself, quickly, recording every `messages created`. */
  async function connectThroughProxy(): Promise<{ socket: Socket; received: Received }> {
    const socket = io(proxied(), {
      transports: ['websocket'],
      forceNew: true,
      reconnectionDelay: 50,
      reconnectionDelayMax: 100
    })
    sockets.push(socket)
    const received: Received = { texts: [], offsets: [] }
    socket.on('messages created', (message: { text: string }, offset: unknown) => {
      received.texts.push(message.text)
      received.offsets.push(offset)
    })
    await once(socket, 'connect')
    return { socket, received }
  }

  /** A new user logged in on a new socket through the proxy. */
  async function loggedInSocket() {
    const session = await signup(server.url, `reader${++users}@example.com`)
    const connected = await connectThroughProxy()
    const [error, login] = await call(connected.socket, 'create', 'authentication', {
      strategy: 'local',
      email: session.email,
      password: 'secret-pw'
    })
    expect(error).toBeNull()
    return { ...connected, session, accessToken: (login as { accessToken: string }).accessToken }
  }

  async function write(text: string): Promise<void> {
    const answer = await request(server.url, 'POST', '/messages', { body: { text }, token: writer.token })
    expect(answer.status).toBe(201)
  }

  /** Cuts the proxy and waits until both the client and the server saw the connection drop. */
  async function cut(socket: Socket): Promise<void> {
    const serverSaw = new Promise((resolve) => server.app.once('disconnect', resolve))
    const clientSaw = once(socket, 'disconnect')
    await proxy.cut()
    await Promise.all([serverSaw, clientSaw])
  }

  /** Writes while the proxy is cut for about 3 s; answers what was written, in order. */
  async function writeDuringCut(prefix: string): Promise<string[]> {
    const written: string[] = []
    const end = Date.now() + 3000
    while (Date.now() < end || written.length < 5) {
      const text = `${prefix} ${written.length + 1}`
      await write(text)
      written.push(text)
    }
    return written
  }

  async function reconnect(socket: Socket): Promise<void> {
    const connected = once(socket, 'connect')
    await proxy.restore()
    await connected
  }

  it('resumes a dropped socket: recovered, same id, still logged in, every missed event once and in order, then live ones', async () => {
    const { socket, received } = await loggedInSocket()
    await write('before')
    await until(socket, () => received.texts.length === 1)
    const id = socket.id
    await cut(socket)
    const missed = await writeDuringCut('missed')
    await reconnect(socket)
    expect(socket.recovered).toBe(true)
    expect(socket.id).toBe(id)
    await write('live')
    await until(socket, () => received.texts.includes('live'))
    expect(received.texts).toEqual(['before', ...missed, 'live'])
    // Each event carried its offset last, and each offset is new.
    expect(received.offsets.every((offset) => typeof offset === 'string')).toBe(true)
    expect(new Set(received.offsets).size).toBe(received.offsets.length)
    // The login came back with it: an authenticated call answers.
    const [error, page] = await call(socket, 'find', 'messages', { $limit: 1 })
    expect(error).toBeNull()
    expect(page).toMatchObject({ total: missed.length + 2 })
  })

  it('resumes a client that had received no event yet (it was handed an offset on connect)', async () => {
    const { socket, received } = await loggedInSocket()
    const lost: unknown[] = []
    createClient()
      .configure(socketio(socket))
      .on('events-lost', () => lost.push('events-lost'))
    await cut(socket)
    const missed = await writeDuringCut('quiet')
    await reconnect(socket)
    expect(socket.recovered).toBe(true)
    await write('quiet live')
    await until(socket, () => received.texts.includes('quiet live'))
    expect(received.texts).toEqual([...missed, 'quiet live'])
    // plumage's client saw nothing to report.
    expect(lost).toEqual([])
  })

  it('replays nothing twice on a second drop after a recovery', async () => {
    const { socket, received } = await loggedInSocket()
    await cut(socket)
    const first = await writeDuringCut('first')
    await reconnect(socket)
    expect(socket.recovered).toBe(true)
    await until(socket, () => received.texts.length === first.length)
    await cut(socket)
    const second = await writeDuringCut('second')
    await reconnect(socket)
    expect(socket.recovered).toBe(true)
    await write('after both')
    await until(socket, () => received.texts.includes('after both'))
    expect(received.texts).toEqual([...first, ...second, 'after both'])
  })

  it('resumes a client that comes back before the server noticed it was gone: the stale socket holding its id is replaced', async () => {
    const { socket, received } = await loggedInSocket()
    const id = socket.id
    const dropped = once(socket, 'disconnect')
    const replaced = new Promise((resolve) => server.app.once('disconnect', resolve))
    // The proxy keeps listening: the client reconnects at once, while its old connection is still open on the server.
    proxy.silence()
    await dropped
    await write('sent to the old connection')
    const connected = once(socket, 'connect')
    await Promise.all([connected, replaced])
    expect(socket.recovered).toBe(true)
    expect(socket.id).toBe(id)
    await write('to the new one')
    await until(socket, () => received.texts.includes('to the new one'))
    expect(received.texts).toEqual(['sent to the old connection', 'to the new one'])
    // The replaced socket did not take the session with it: the next drop resumes too.
    await cut(socket)
    await write('after another drop')
    await reconnect(socket)
    expect(socket.recovered).toBe(true)
    await until(socket, () => received.texts.includes('after another drop'))
    expect(received.texts).toEqual(['sent to the old connection', 'to the new one', 'after another drop'])
  })

  it('does not restore a session revoked meanwhile (logged out from another client): the client must log in again', async () => {
    const { socket, received, accessToken } = await loggedInSocket()
    await cut(socket)
    const logout = await request(server.url, 'DELETE', '/authentication', { token: accessToken })
    expect(logout.status).toBe(200)
    await write('after logout')
    await reconnect(socket)
    expect(socket.recovered).toBe(false)
    const [error] = await call(socket, 'find', 'messages', {})
    expect(error).toMatchObject({ name: 'NotAuthenticated' })
    await write('still logged out')
    await call(socket, 'find', 'users', { $limit: 0 })
    expect(received.texts).toEqual([])
  })

  it("does not resume after the window: recovered is false, and plumage's client says events were lost", async () => {
    const { socket, received } = await loggedInSocket()
    const lost = new Promise((resolve) => createClient().configure(socketio(socket)).once('events-lost', resolve))
    await cut(socket)
    await write('too late')
    clock.skew += (WINDOW_SECONDS + 1) * 1000
    try {
      await reconnect(socket)
    } finally {
      clock.skew = 0
    }
    expect(socket.recovered).toBe(false)
    await lost
    expect(received.texts).toEqual([])
  })

  it('resumes a connection older than the history that received no event: the server kept its offset current', async () => {
    // Anonymous: the reference app publishes messages to logged-in connections only, so this one receives none.
    const { socket } = await connectThroughProxy()
    const offsets: string[] = []
    socket.on('plumage:offset', (offset: string) => offsets.push(offset))
    await write('not for the quiet one')
    // The periodic offset (every half window) after that write covers it.
    const heard = offsets.length
    await until(socket, () => offsets.length > heard)
    // Long enough for the history to drop that write: an offset from before it would be unknown now.
    clock.skew += 200_000
    try {
      await write('drops the first from the history')
      await cut(socket)
      await reconnect(socket)
    } finally {
      clock.skew = 0
    }
    expect(socket.recovered).toBe(true)
  }, 60_000)

  it('resumes the official Feathers client: its service events get every missed message once, in order', async () => {
    const session = await signup(server.url, `feathers${++users}@example.com`)
    const socket = io(proxied(), {
      transports: ['websocket'],
      forceNew: true,
      reconnectionDelay: 50,
      reconnectionDelayMax: 100
    })
    sockets.push(socket)
    const client = feathers()
      .configure(socketioClient(socket as unknown as FeathersSocket))
      .configure(authClient({ storage: new authClientModule.MemoryStorage() }))
    await client.authenticate({ strategy: 'local', email: session.email, password: 'secret-pw' })
    const texts: string[] = []
    client.service('messages').on('created', (message: { text: string }) => {
      texts.push(message.text)
    })
    await write('feathers before')
    await until(socket, () => texts.length === 1)
    await cut(socket)
    const missed = await writeDuringCut('feathers missed')
    await reconnect(socket)
    expect(socket.recovered).toBe(true)
    await write('feathers live')
    await until(socket, () => texts.includes('feathers live'))
    expect(texts).toEqual(['feathers before', ...missed, 'feathers live'])
    await expect(client.service('messages').find({ query: { $limit: 0 } })).resolves.toMatchObject({
      total: expect.any(Number)
    })
  })
})

describe('socket connection state recovery turned off (SOCKET_RECOVERY_WINDOW=0)', () => {
  it('does not resume, and events carry no offset', async () => {
    const server = await startAuthServer({ AUTH_SECRET, BCRYPT_ROUNDS: '4', SOCKET_RECOVERY_WINDOW: '0' })
    const proxy = await startTcpProxy('127.0.0.1', Number(new URL(server.url).port))
    const session = await signup(server.url, 'off@example.com')
    const socket = io(`http://127.0.0.1:${proxy.port}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnectionDelay: 50,
      reconnectionDelayMax: 100
    })
    try {
      await once(socket, 'connect')
      await call(socket, 'create', 'authentication', { strategy: 'local', email: session.email, password: 'secret-pw' })
      const event = new Promise<unknown[]>((resolve) =>
        socket.once('messages created', (...args: unknown[]) => resolve(args))
      )
      await request(server.url, 'POST', '/messages', { body: { text: 'hi' }, token: session.token })
      expect(await event).toEqual([expect.objectContaining({ text: 'hi' })])
      const dropped = once(socket, 'disconnect')
      await proxy.cut()
      await dropped
      const connected = once(socket, 'connect')
      await proxy.restore()
      await connected
      // socket.io-client leaves `recovered` undefined when the server offered no session at all.
      expect(socket.recovered).toBeFalsy()
    } finally {
      socket.disconnect()
      await proxy.close()
      await server.close()
    }
  })
})

function once(socket: Socket, event: 'connect' | 'disconnect'): Promise<void> {
  return new Promise((resolve) => socket.once(event, () => resolve()))
}
