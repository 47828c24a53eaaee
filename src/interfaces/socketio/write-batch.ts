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
 * Under load many events are published per turn (every create whose call finished in it), and one
 * syscall per frame per socket was the transport's main cost. The first event of a turn is written
 * at once, so a lone event is not delayed; later ones in the same turn are corked until setImmediate.
 */
export class WriteBatch {
  private corked?: Set<Corkable>

  /** True when an earlier event of this turn already went out: the caller then adds its targets. */
  open(): boolean {
    if (this.corked) return true
    this.corked = new Set()
    setImmediate(() => this.flush())
    return false
  }

  add(socket: Socket): void {
    const tcp = tcpSocketOf(socket)
    if (tcp === undefined || this.corked!.has(tcp)) return
    tcp.cork()
    this.corked!.add(tcp)
  }

  private flush(): void {
    const corked = this.corked!
    this.corked = undefined
    for (const tcp of corked) if (!tcp.destroyed) tcp.uncork()
  }
}
