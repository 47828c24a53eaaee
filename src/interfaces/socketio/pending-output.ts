import type { Socket } from 'socket.io'

/** What engine.io queues for a socket until its transport can write (a socket.io packet, encoded). */
type QueuedPacket = { data?: unknown }
/** The ws WebSocket under engine.io's websocket transport: what it holds for the TCP socket, and how to drop it. */
type WebSocketLike = { bufferedAmount?: number; terminate?: () => void }

function sizeOf(packet: QueuedPacket): number {
  const { data } = packet
  // A string's length, not its UTF-8 byte count: counting bytes would read every event once per socket.
  if (typeof data === 'string') return data.length
  return data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? data.byteLength : 0
}

function webSocketOf(socket: Socket): WebSocketLike | undefined {
  const transport = socket.conn.transport as { name?: string; socket?: WebSocketLike }
  return transport.name === 'websocket' ? transport.socket : undefined
}

/**
 * Bounds what a socket that does not read may hold on the server. A client that stops reading (a
 * stalled network, a frozen tab) makes its TCP socket's send buffer fill; then ws keeps the frames,
 * engine.io stops writing and queues packets in the socket's write buffer, and both grow with every
 * event published to it. Its pending output is what engine.io queued (counted as packets are
 * queued, reset when the queue is handed to the transport) plus what the websocket holds
 * (`bufferedAmount`), so a check costs no walk over the queue. A socket past `maxBytes` is
 * disconnected before it is sent more: it never holds more than the bound and one event.
 */
export class PendingOutput {
  /** Bytes engine.io queued for a socket's connection since its last flush; none while its queue is empty. */
  private readonly queued = new WeakMap<object, number>()
  /**
   * engine.io's events of every socket's connection, as one pair of listeners (called with the connection as `this`,
   * as EventEmitter listeners are) rather than two closures per socket.
   */
  private readonly packetCreated = ((queued) =>
    function (this: object, packet: QueuedPacket): void {
      queued.set(this, (queued.get(this) ?? 0) + sizeOf(packet))
    })(this.queued)
  // engine.io hands its whole queue to the transport at once.
  private readonly flushed = ((queued) =>
    function (this: object): void {
      queued.delete(this)
    })(this.queued)

  constructor(
    private readonly maxBytes: number,
    /** Told once per socket disconnected for this, with what it held. */
    private readonly dropped: (socket: Socket, pendingBytes: number) => void
  ) {}

  /** Starts counting what engine.io queues for a new socket. */
  track(socket: Socket): void {
    socket.conn.on('packetCreate', this.packetCreated)
    socket.conn.on('flush', this.flushed)
  }

  /** The bytes a socket has yet to take: queued by engine.io and held by its websocket. */
  pendingBytes(socket: Socket): number {
    return (this.queued.get(socket.conn) ?? 0) + (webSocketOf(socket)?.bufferedAmount ?? 0)
  }

  /**
   * False when the socket must not be sent more: it is gone, or it holds more than the bound, and
   * is then disconnected (as the server deciding, so its session is not kept for recovery) and its
   * transport dropped at once, not after the close handshake it would never answer.
   */
  admits(socket: Socket): boolean {
    if (!socket.connected) return false
    const pending = this.pendingBytes(socket)
    if (pending <= this.maxBytes) return true
    const webSocket = webSocketOf(socket)
    socket.disconnect(true)
    if (typeof webSocket?.terminate === 'function') webSocket.terminate()
    else socket.conn.close(true)
    this.dropped(socket, pending)
    return false
  }
}
