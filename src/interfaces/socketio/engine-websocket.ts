import type { Socket } from 'socket.io'

/** The TCP socket under a websocket (ws keeps it in `_socket`; engine.io reaches into ws the same way). */
export type TcpSocket = {
  cork(): void
  uncork(): void
  write(chunk: Buffer): boolean
  writable: boolean
  writableLength: number
  writableCorked: number
  destroyed: boolean
}
/** ws's sender: the frames it holds back (only while it compresses one, never with per-message deflate off). */
type Sender = { _queue?: unknown[]; _state?: number }
/** The ws WebSocket under engine.io's websocket transport (ws 8). */
export type WebSocket = {
  readyState: number
  bufferedAmount?: number
  terminate?: () => void
  _socket?: TcpSocket
  _sender?: Sender
}
/** engine.io's socket under a socket.io socket: its state, the packets it queued and its transport. */
export type EngineSocket = {
  readyState: string
  writeBuffer?: unknown[]
  transport: { name?: string; writable: boolean; perMessageDeflate?: unknown; socket?: WebSocket }
}

/** ws's `WebSocket.OPEN`, and its sender's state when it holds nothing back (`DEFAULT` in ws/lib/sender.js). */
const OPEN = 1
const SENDER_IDLE = 0

export const engineOf = (socket: Socket): EngineSocket => socket.conn as unknown as EngineSocket

/** The websocket under a socket.io socket, when its transport is a websocket. */
export function webSocketOf(engine: EngineSocket): WebSocket | undefined {
  const transport = engine.transport
  return transport.name === 'websocket' ? transport.socket : undefined
}

/**
 * Whether a frame may be written straight to the websocket's TCP socket: engine.io is open, its transport has had
 * every write it made taken by the TCP socket (engine.io marks it writable once ws's last write completed) and it
 * queued nothing since, ws holds nothing back and the websocket is open; and, as engine.io asks before it writes a
 * frame built once for all, its transport does not compress (per-message deflate off, as plumage configures it).
 * Everything sent before is then in the TCP socket already, and what is sent after goes in behind the frame,
 * through ws as ever: the order holds. The private members read here are those of ws 8 and engine.io 6; with
 * others, this says no and the caller goes through engine.io.
 */
export function writesDirectly(engine: EngineSocket, webSocket: WebSocket, tcp: TcpSocket): boolean {
  const sender = webSocket._sender
  return (
    engine.transport.writable &&
    !engine.transport.perMessageDeflate &&
    engine.readyState === 'open' &&
    engine.writeBuffer?.length === 0 &&
    webSocket.readyState === OPEN &&
    sender?._state === SENDER_IDLE &&
    sender._queue?.length === 0 &&
    tcp.writable
  )
}
