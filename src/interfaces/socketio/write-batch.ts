import type { Socket } from 'socket.io'
import type { EncodedEvent } from './encoded-event.js'
import { engineOf, webSocketOf, writesDirectly, type TcpSocket } from './engine-websocket.js'

/**
 * Writes events to sockets, and coalesces the frames that one turn of the event loop writes to the same socket
 * into one write. Under load many events are published per turn (every create whose call finished in it, every
 * event of a logged write), and one syscall per frame per socket was the transport's main cost. Every socket
 * written to is corked from its first frame of the turn until setImmediate, right after the turn's I/O callbacks:
 * a lone event waits for the rest of its turn, not for a timer. (Writing the first event of a turn at once and
 * corking only the later ones left one syscall per socket per event when events came one per turn, as with
 * several instances each logging small groups: 26 % of an instance's CPU at 4 instances, see BENCHMARKS.md.)
 *
 * A websocket whose engine.io and ws have nothing pending (engine-websocket.ts) gets the event's frame written
 * straight to its TCP socket: the bytes ws would write, without engine.io's packet, queue, flush and events and
 * ws's two writes per socket. One event to 10,000 sockets is then a pass that only buffers a frame in each
 * corked socket, and the writes right after it: clients start reading that much sooner.
 */
export class WriteBatch {
  private corked?: Set<TcpSocket>

  /** Writes `event` to a connected socket, after what was written to it before. */
  write(socket: Socket, event: EncodedEvent): void {
    const engine = engineOf(socket)
    const webSocket = webSocketOf(engine)
    const tcp = webSocket?._socket
    if (tcp === undefined || typeof tcp.cork !== 'function') return event.sendTo(socket)
    this.cork(tcp)
    if (event.frame !== undefined && writesDirectly(engine, webSocket!, tcp)) tcp.write(event.frame)
    else event.sendTo(socket)
  }

  /** Corks `tcp` until the end of this turn (once per turn). */
  private cork(tcp: TcpSocket): void {
    if (!this.corked) {
      this.corked = new Set()
      setImmediate(() => this.flush())
    } else if (this.corked.has(tcp)) return
    tcp.cork()
    this.corked.add(tcp)
  }

  private flush(): void {
    const corked = this.corked!
    this.corked = undefined
    for (const tcp of corked) if (!tcp.destroyed) tcp.uncork()
  }
}
