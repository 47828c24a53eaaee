import type { Server, Socket } from 'socket.io'

/** The options engine.io writes a packet with; socket.io's adapter adds the packet's websocket frame to them. */
type PacketOptions = { preEncoded: true; wsPreEncodedFrame?: Buffer[] }
/**
 * What socket.io's own room broadcast (`io.to(room).emit`) uses of its adapter and its sockets' clients; both are
 * private in socket.io's typings, public members in its JavaScript (socket.io-adapter 2.5, socket.io 4.8).
 */
type Encoder = { _encode(packet: { type: number; data: unknown[]; nsp: string }, options: PacketOptions): unknown[] }
type EngineWriter = { writeToEngine(encoded: unknown[], options: PacketOptions): void }

/** socket.io-parser's EVENT packet type. */
const EVENT = 2

/**
 * One event encoded once for many sockets: the socket.io packet and, as websocket frames need no mask from a
 * server, the websocket frame that carries it (when per-message deflate is off, as plumage configures it). Each
 * socket then only gets that frame written, as with socket.io's room broadcast, but to sockets the caller picks
 * one by one — without `io.to(ids)` building a set of 10,000 ids and looking each socket up by its room.
 */
export class EncodedEvent {
  private readonly encoded: unknown[]
  private readonly options: PacketOptions = { preEncoded: true }
  /**
   * The whole websocket frame (header and payload) in one buffer, the same bytes for every websocket client, when
   * the event is one text frame; written straight to a TCP socket when engine.io and ws would only pass it on.
   */
  readonly frame: Buffer | undefined

  constructor(io: Server, args: unknown[]) {
    const namespace = io.of('/')
    this.encoded = (namespace.adapter as unknown as Encoder)._encode(
      { type: EVENT, data: args, nsp: namespace.name },
      this.options
    )
    const parts = this.options.wsPreEncodedFrame
    this.frame = Array.isArray(parts) && parts.every(Buffer.isBuffer) ? Buffer.concat(parts) : undefined
  }

  /** Writes the event to one connected socket through engine.io (which queues it while its transport is busy). */
  sendTo(socket: Socket): void {
    ;(socket.client as unknown as EngineWriter).writeToEngine(this.encoded, this.options)
  }
}
