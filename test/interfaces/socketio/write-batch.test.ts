import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server, type Socket } from 'socket.io'
import { io as connectClient, type Socket as ClientSocket } from 'socket.io-client'
import type { EncodedEvent } from '../../../src/interfaces/socketio/encoded-event.js'
import { EncodedEvent as RealEncodedEvent } from '../../../src/interfaces/socketio/encoded-event.js'
import { COALESCING_MS, WriteBatch } from '../../../src/interfaces/socketio/write-batch.js'

/** A socket.io socket over an idle websocket whose TCP socket counts its corks, uncorks and writes. */
function fakeSocket(transport = 'websocket') {
  const tcp = {
    corks: 0,
    uncorks: 0,
    written: [] as Buffer[],
    destroyed: false,
    writable: true,
    writableLength: 0,
    writableCorked: 0,
    cork: () => void (tcp.corks++, tcp.writableCorked++),
    uncork: () => void (tcp.uncorks++, tcp.writableCorked--),
    write: (chunk: Buffer) => tcp.written.push(chunk) > 0
  }
  const engine = {
    readyState: 'open',
    writeBuffer: [] as unknown[],
    transport: {
      name: transport,
      writable: true,
      perMessageDeflate: null as unknown,
      socket: { readyState: 1, _socket: tcp, _sender: { _state: 0, _queue: [] as unknown[] } }
    }
  }
  const socket = { conn: engine } as unknown as Socket
  return { socket, tcp, engine }
}

/** An event with a frame (unless null) that counts what went through engine.io. */
function fakeEvent(frame: Buffer | null = Buffer.from('frame')) {
  const throughEngine: Socket[] = []
  const event = {
    frame: frame ?? undefined,
    sendTo: (socket: Socket) => throughEngine.push(socket)
  } as unknown as EncodedEvent
  return { event, throughEngine }
}

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve))

describe('WriteBatch', () => {
  it("writes a turn's first event at once and corks a socket from its second frame until the end of the turn", async () => {
    const batch = new WriteBatch(() => 0)
    const first = fakeSocket()
    const second = fakeSocket()
    const third = fakeSocket()
    const { event } = fakeEvent()
    batch.write(first.socket, event)
    batch.write(second.socket, event)
    expect([first.tcp.corks, second.tcp.corks]).toEqual([0, 0])
    expect([first.tcp.written.length, second.tcp.written.length]).toEqual([1, 1])
    batch.write(first.socket, fakeEvent().event)
    batch.write(first.socket, fakeEvent().event)
    expect([first.tcp.corks, second.tcp.corks]).toEqual([1, 0])
    expect(first.tcp.uncorks).toBe(0)
    // A later event of the turn waits for its end at every socket, one the first event did not reach too.
    batch.write(third.socket, fakeEvent().event)
    expect(third.tcp.corks).toBe(1)
    await endOfTurn()
    expect([first.tcp.uncorks, second.tcp.uncorks, third.tcp.uncorks]).toEqual([1, 0, 1])
  })

  it('corks every socket from its first frame for COALESCING_MS after a turn that wrote to a socket twice', async () => {
    let now = 0
    const batch = new WriteBatch(() => now)
    const { socket, tcp } = fakeSocket()
    const other = fakeSocket()
    const { event } = fakeEvent()
    batch.write(socket, event)
    batch.write(socket, fakeEvent().event)
    await endOfTurn()
    expect([tcp.corks, tcp.uncorks]).toEqual([1, 1])

    now = COALESCING_MS - 1
    batch.write(other.socket, event)
    expect(other.tcp.corks).toBe(1)
    batch.write(other.socket, event)
    expect(other.tcp.corks).toBe(1)
    await endOfTurn()
    expect(other.tcp.uncorks).toBe(1)

    // That turn wrote to a socket twice as well: the window runs from its end.
    now = 2 * COALESCING_MS - 2
    batch.write(socket, event)
    expect(tcp.corks).toBe(2)
    await endOfTurn()

    now = 3 * COALESCING_MS
    batch.write(socket, event)
    expect(tcp.corks).toBe(2)
    await endOfTurn()
    expect([tcp.corks, tcp.uncorks]).toEqual([2, 2])
  })

  it('leaves a destroyed socket corked and writes to a polling transport through engine.io', async () => {
    const batch = new WriteBatch()
    const gone = fakeSocket()
    const polling = fakeSocket('polling')
    const { event, throughEngine } = fakeEvent()
    batch.write(polling.socket, event)
    batch.write(gone.socket, event)
    batch.write(gone.socket, fakeEvent().event)
    gone.tcp.destroyed = true
    await endOfTurn()
    expect([gone.tcp.corks, gone.tcp.uncorks]).toEqual([1, 0])
    expect([polling.tcp.corks, polling.tcp.uncorks]).toEqual([0, 0])
    expect(throughEngine).toEqual([polling.socket])
  })

  it("writes the event's frame straight to the TCP socket only when engine.io and ws hold nothing", () => {
    const batch = new WriteBatch()
    const { event, throughEngine } = fakeEvent()
    const idle = fakeSocket()
    batch.write(idle.socket, event)
    expect(idle.tcp.written).toEqual([event.frame])
    expect(throughEngine).toEqual([])

    const busy = [
      (s: ReturnType<typeof fakeSocket>) => (s.engine.transport.writable = false),
      (s: ReturnType<typeof fakeSocket>) => (s.engine.transport.perMessageDeflate = { threshold: 1024 }),
      (s: ReturnType<typeof fakeSocket>) => s.engine.writeBuffer.push({ data: 'queued' }),
      (s: ReturnType<typeof fakeSocket>) => (s.engine.readyState = 'closing'),
      (s: ReturnType<typeof fakeSocket>) => (s.engine.transport.socket.readyState = 2),
      (s: ReturnType<typeof fakeSocket>) => (s.engine.transport.socket._sender._state = 1),
      (s: ReturnType<typeof fakeSocket>) => s.engine.transport.socket._sender._queue.push([]),
      (s: ReturnType<typeof fakeSocket>) => (s.tcp.writable = false)
    ].map((makeBusy) => {
      const socket = fakeSocket()
      makeBusy(socket)
      batch.write(socket.socket, event)
      return socket
    })
    expect(busy.map(({ tcp }) => tcp.written)).toEqual(busy.map(() => []))
    expect(throughEngine).toEqual(busy.map(({ socket }) => socket))

    const noFrame = fakeEvent(null)
    const other = fakeSocket()
    batch.write(other.socket, noFrame.event)
    expect(other.tcp.written).toEqual([])
    expect(noFrame.throughEngine).toEqual([other.socket])
  })
})

describe('WriteBatch with socket.io, engine.io and ws', () => {
  let http: HttpServer
  let io: Server
  let client: ClientSocket
  let socket: Socket

  beforeAll(async () => {
    http = createServer()
    io = new Server(http, { perMessageDeflate: false })
    const connected = new Promise<Socket>((resolve) => io.once('connection', resolve))
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const { port } = http.address() as AddressInfo
    client = connectClient(`http://127.0.0.1:${port}`, { transports: ['websocket'], reconnection: false })
    socket = await connected
  })
  afterAll(async () => {
    client.disconnect()
    io.disconnectSockets(true)
    await new Promise((resolve) => io.close(resolve))
  })

  /** The next `count` events the client receives, as [name, ...args]. */
  const received = (count: number) =>
    new Promise<unknown[][]>((resolve) => {
      const seen: unknown[][] = []
      const listener = (...event: unknown[]) => {
        seen.push(event)
        if (seen.length < count) return
        client.offAny(listener)
        resolve(seen)
      }
      client.onAny(listener)
    })

  it('writes past engine.io and ws to an idle websocket, and behind what engine.io holds, in order', async () => {
    type Sender = { sendFrame(frame: (Buffer | string)[], done: () => void): void }
    const webSocket = (socket.conn.transport as unknown as { socket: { _sender: Sender } }).socket
    const sendFrame = jest.spyOn(webSocket._sender, 'sendFrame')
    const sentByWs = () => sendFrame.mock.calls.map(([frame]) => frame.join(''))
    const batch = new WriteBatch()

    const first = received(1)
    batch.write(socket, new RealEncodedEvent(io, ['straight', { n: 1 }, 'offset-1']))
    expect(await first).toEqual([['straight', { n: 1 }, 'offset-1']])
    expect(sentByWs()).toEqual([])

    // engine.io's own packet makes its transport busy until ws's write completes (after the turn): later events of
    // the turn queue behind it in engine.io.
    const next = received(4)
    batch.write(socket, new RealEncodedEvent(io, ['straight', { n: 2 }]))
    socket.emit('through engine.io', 3)
    batch.write(socket, new RealEncodedEvent(io, ['queued', { n: 4 }]))
    batch.write(socket, new RealEncodedEvent(io, ['binary', Buffer.from([5])]))
    const events = await next
    expect(events.map(([name]) => name)).toEqual(['straight', 'through engine.io', 'queued', 'binary'])
    expect(events[1]).toEqual(['through engine.io', 3])
    // ws wrote engine.io's packet, the event queued behind it and the binary event's two packets; not 'straight'.
    expect(sentByWs()).toHaveLength(4)
    expect(sentByWs().filter((frame) => frame.includes('straight'))).toEqual([])
    sendFrame.mockRestore()
  })
})
