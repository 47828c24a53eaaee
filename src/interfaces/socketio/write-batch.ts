import type { Socket } from 'socket.io'
import type { EncodedEvent } from './encoded-event.js'
import { engineOf, webSocketOf, writesDirectly, type TcpSocket } from './engine-websocket.js'

/** How long after a turn in which a socket was written to twice every socket is corked from its first frame. */
export const COALESCING_MS = 1000

/**
 * Writes events to sockets, and coalesces the frames that one turn of the event loop writes to the same socket
 * into one write. Under load many events are published per turn (every create whose call finished in it, every
 * event of a logged write), and one syscall per frame per socket was the transport's main cost. A socket is
 * corked from its second frame of a turn until setImmediate, right after the turn's I/O callbacks; and for
 * COALESCING_MS after a turn in which that happened, every socket is corked from its first frame: under such a
 * load each socket gets one write per turn. (Writing the first event of every turn at once left one syscall per
 * socket per event when events came one per turn, as with several instances each logging small groups: 26 % of an
 * instance's CPU at 4 instances, see BENCHMARKS.md.) Otherwise a turn's first frame to a socket is written at
 * once: corking it as well cost one event to 10,000 sockets a pass over them all before the first write, and a
 * second pass to write, each socket's state read twice (at 3,000 sockets, 3 µs more CPU per delivered event and
 * the first client served tens of ms later).
 *
 * A websocket whose engine.io and ws have nothing pending (engine-websocket.ts) gets the event's frame written
 * straight to its TCP socket: the bytes ws would write, without engine.io's packet, queue, flush and events and
 * ws's two writes per socket.
 */
export class WriteBatch {
  /** The TCP sockets written to in this turn, each with whether it is corked (undefined between turns). */
  private written?: Map<TcpSocket, boolean>
  private corked: TcpSocket[] = []
  /** Whether this turn corks every socket from its first frame. */
  private coalescing = false
  /** Whether a socket was written to twice in this turn. */
  private repeated = false
  /** Until when (a time of `now`) turns cork every socket from its first frame. */
  private coalesceUntil = -Infinity

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Writes `event` to a connected socket, after what was written to it before. */
  write(socket: Socket, event: EncodedEvent): void {
    const engine = engineOf(socket)
    const webSocket = webSocketOf(engine)
    const tcp = webSocket?._socket
    if (tcp === undefined || typeof tcp.cork !== 'function') return event.sendTo(socket)
    this.track(tcp)
    if (event.frame !== undefined && writesDirectly(engine, webSocket!, tcp)) tcp.write(event.frame)
    else event.sendTo(socket)
  }

  /** Notes a frame for `tcp` in this turn, and corks it when it is to wait for the end of the turn. */
  private track(tcp: TcpSocket): void {
    let written = this.written
    if (written === undefined) {
      written = this.written = new Map()
      this.coalescing = this.now() < this.coalesceUntil
      setImmediate(() => this.flush())
    }
    const corked = written.get(tcp)
    if (corked === undefined) {
      written.set(tcp, this.coalescing)
      if (this.coalescing) this.cork(tcp)
      return
    }
    this.repeated = true
    if (corked) return
    written.set(tcp, true)
    this.cork(tcp)
  }

  private cork(tcp: TcpSocket): void {
    tcp.cork()
    this.corked.push(tcp)
  }

  private flush(): void {
    if (this.repeated) this.coalesceUntil = this.now() + COALESCING_MS
    const corked = this.corked
    this.corked = []
    this.written = undefined
    this.repeated = false
    for (const tcp of corked) if (!tcp.destroyed) tcp.uncork()
  }
}
