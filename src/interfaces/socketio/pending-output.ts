import type { Socket } from 'socket.io'
import { engineOf, webSocketOf, type EngineSocket } from './engine-websocket.js'

/** What engine.io queues for a socket until its transport can write (a socket.io packet, encoded). */
type QueuedPacket = { data?: unknown }

function sizeOf(packet: QueuedPacket): number {
  const { data } = packet
  // A string's length, not its UTF-8 byte count: counting bytes would read every event once per socket.
  if (typeof data === 'string') return data.length
  return data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? data.byteLength : 0
}

/** What of a queue has been counted: its first `packets` packets, `bytes` long together. */
type Tally = { packets: number; bytes: number }

/**
 * Bounds what a socket that does not read may hold on the server. A client that stops reading (a
 * stalled network, a frozen tab) makes its TCP socket's send buffer fill; then the TCP socket keeps
 * the frames written to it (by ws, or straight by write-batch.ts), engine.io stops writing once one
 * of its own writes waits and queues packets in the socket's write buffer, and both grow with every
 * event published to it. Its pending output is what engine.io queued plus what the websocket holds
 * (`bufferedAmount`: its TCP socket's buffer and ws's). A socket past `maxBytes` is disconnected
 * before it is sent more: it never holds more than the bound and one event.
 *
 * engine.io's queue is counted when a socket is checked, not as packets are queued: listeners on every socket's
 * packets cost each delivery a call and each socket their entries. A check adds only the packets queued since the
 * last one (engine.io appends to its queue, and hands the whole queue to the transport as it starts a new one),
 * so a socket that falls behind is not walked again for every event; a socket whose queue is empty, the common
 * case, costs no tally at all.
 */
export class PendingOutput {
  /** What has been counted of each queue engine.io holds: kept by the queue, so it goes with it. */
  private readonly tallies = new WeakMap<QueuedPacket[], Tally>()

  constructor(
    private readonly maxBytes: number,
    /** Told once per socket disconnected for this, with what it held. */
    private readonly dropped: (socket: Socket, pendingBytes: number) => void
  ) {}

  /** The bytes a socket has yet to take: queued by engine.io and held by its websocket. */
  pendingBytes(socket: Socket): number {
    const engine = engineOf(socket)
    return this.queuedBytes(engine) + (webSocketOf(engine)?.bufferedAmount ?? 0)
  }

  /**
   * False when the socket must not be sent more: it is gone, or it holds more than the bound, and
   * is then disconnected (as the server deciding, so its session is not kept for recovery) and its
   * transport dropped at once, not after the close handshake it would never answer.
   */
  admits(socket: Socket): boolean {
    if (!socket.connected) return false
    // A transport engine.io may write to has had every frame it was given taken by the TCP socket (engine.io marks
    // it writable once ws's last write completed), and a TCP socket with nothing buffered has had every frame
    // written straight to it (write-batch.ts) taken by the kernel: nothing is pending, the common case stops here.
    const engine = engineOf(socket)
    const webSocket = webSocketOf(engine)
    if (engine.transport.writable && !(webSocket?._socket && webSocket._socket.writableLength > 0)) return true
    const pending = this.pendingBytes(socket)
    if (pending <= this.maxBytes) return true
    socket.disconnect(true)
    if (typeof webSocket?.terminate === 'function') webSocket.terminate()
    else socket.conn.close(true)
    this.dropped(socket, pending)
    return false
  }

  private queuedBytes(engine: EngineSocket): number {
    const queue = engine.writeBuffer as QueuedPacket[] | undefined
    if (queue === undefined || queue.length === 0) return 0
    let tally = this.tallies.get(queue)
    if (tally === undefined) this.tallies.set(queue, (tally = { packets: 0, bytes: 0 }))
    for (; tally.packets < queue.length; tally.packets++) tally.bytes += sizeOf(queue[tally.packets]!)
    return tally.bytes
  }
}
