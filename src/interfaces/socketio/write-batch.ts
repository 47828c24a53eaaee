import type { Socket } from 'socket.io'
import type { EncodedEvent } from './encoded-event.js'
import { engineOf, webSocketOf, writesDirectly, type TcpSocket } from './engine-websocket.js'

/** How long after a turn with more than one event every socket is corked from its first frame. */
export const COALESCING_MS = 1000

/**
 * Writes events to sockets, and coalesces the frames that one turn of the event loop writes to the same socket
 * into one write. Under load many events are published per turn (every create whose call finished in it, every
 * event of a logged write), and one syscall per frame per socket was the transport's main cost. A turn's later
 * events cork the sockets they are written to until setImmediate, right after the turn's I/O callbacks; and for
 * COALESCING_MS after a turn with more than one event, every socket is corked from its first frame: under such a
 * load each socket gets one write per turn. (Writing the first event of every turn at once left one syscall per
 * socket per event when events came one per turn, as with several instances each logging small groups: 26 % of an
 * instance's CPU at 4 instances, see BENCHMARKS.md.) Otherwise a turn's first event is written at once: corking
 * it as well cost one event to 10,000 sockets a pass over them all before the first write, and a
 * second pass to write, each socket's state read twice (at 3,000 sockets, 3 µs more CPU per delivered event and
 * the first client served tens of ms later).
 *
 * A websocket whose engine.io and ws have nothing pending (engine-websocket.ts) gets the event's frame written
 * straight to its TCP socket: the bytes ws would write, without engine.io's packet, queue, flush and events and
 * ws's two writes per socket.
 */
export class WriteBatch {
  /** The first event written in this turn (undefined between turns): the one whose frames are not held back. */
  private first?: EncodedEvent
  private corked: TcpSocket[] = []
  /** Whether this turn corks every socket from its first frame. */
  private coalescing = false
  /** Whether this turn wrote more than one event (a socket may have had two frames). */
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
    this.track(tcp, event)
    if (event.frame !== undefined && writesDirectly(engine, webSocket!, tcp)) tcp.write(event.frame)
    else event.sendTo(socket)
  }

  /**
   * Notes a frame of `event` for `tcp` in this turn, and corks it when it is to wait for the end of the turn. An
   * event goes to each socket once, so only a later event of the turn can be a socket's second frame: the first
   * event's frames need no record of the sockets they went to (a Map of 10,000 sockets built for every event to
   * all cost more than the rest of the batch). A later event corks every socket it is written to, whether or not
   * the first went there: with several events in a turn, every socket waits for the end of the turn, as it does
   * for COALESCING_MS after. The only corks are the batch's (ws and engine.io cork and uncork within one call), so
   * a corked socket is one the batch already holds.
   */
  private track(tcp: TcpSocket, event: EncodedEvent): void {
    if (this.first === undefined) {
      this.first = event
      this.coalescing = this.now() < this.coalesceUntil
      setImmediate(() => this.flush())
    }
    if (event === this.first && !this.coalescing) return
    if (tcp.writableCorked > 0) {
      this.repeated = true
      return
    }
    if (event !== this.first) this.repeated = true
    tcp.cork()
    this.corked.push(tcp)
  }

  private flush(): void {
    if (this.repeated) this.coalesceUntil = this.now() + COALESCING_MS
    const corked = this.corked
    this.corked = []
    this.first = undefined
    this.repeated = false
    for (const tcp of corked) if (!tcp.destroyed) tcp.uncork()
  }
}
