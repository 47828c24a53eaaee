import type { Socket } from 'socket.io'

/** The TCP socket under a websocket connection (ws keeps it in `_socket`; engine.io reaches into ws the same way). */
type Corkable = { cork(): void; uncork(): void; destroyed?: boolean }

function tcpSocketOf(socket: Socket): Corkable | undefined {
  const transport = socket.conn.transport as { name?: string; socket?: { _socket?: Partial<Corkable> } }
  const tcp = transport.name === 'websocket' ? transport.socket?._socket : undefined
  return typeof tcp?.cork === 'function' && typeof tcp.uncork === 'function' ? (tcp as Corkable) : undefined
}

/**
 * Coalesces the frames that one turn of the event loop writes to the same socket into one write.
 * Under load many events are published per turn (every create whose call finished in it, every
 * event of a logged write), and one syscall per frame per socket was the transport's main cost.
 * Every socket written to is corked from its first frame of the turn until setImmediate, right
 * after the turn's I/O callbacks: a lone event waits for the rest of its turn, not for a timer.
 * (Writing the first event of a turn at once and corking only the later ones left one syscall per
 * socket per event when events came one per turn, as with several instances each logging small
 * groups: 26 % of an instance's CPU at 4 instances, see BENCHMARKS.md.)
 */
export class WriteBatch {
  private corked?: Set<Corkable>

  /** Corks `socket` until the end of this turn (once per turn). */
  add(socket: Socket): void {
    const tcp = tcpSocketOf(socket)
    if (tcp === undefined) return
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
