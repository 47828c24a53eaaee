import { Adapter, type PrivateSessionId, type Session } from 'socket.io-adapter'

/** What the adapter needs of the transport: whether a session may resume, and how to drop a stale socket. */
export interface SessionRestorer {
  /**
   * The session's socket id and what the transport needs to restore it (handed to the new socket as
   * its `data`), or undefined when the session cannot be resumed from `offset`.
   */
  restore(pid: string, offset: string): Promise<{ sid: string; data: unknown } | undefined>
  /** A socket still open under a session resumed elsewhere: its client is gone and comes back as the new one. */
  replace(stale: { id: string }): void
}

/**
 * socket.io's connection state recovery with the app's sessions and event history instead of
 * socket.io's in-process session store: `restoreSession` asks the gateway (through `restorer`),
 * which may answer for a session another instance kept. Sessions are saved by the gateway when
 * they change, before the client learns its ids, so `persistSession` stays the base Adapter's
 * no-op; missed packets are replayed by the gateway once the socket is open, its channels computed again.
 */
export function recoveryAdapter(restorer: SessionRestorer): typeof Adapter {
  /** Each session's newest restore here: a client that reconnects again gave up its attempt before. */
  const newest = new Map<string, symbol>()
  return class RecoveryAdapter extends Adapter {
    override async restoreSession(pid: PrivateSessionId, offset: string): Promise<Session> {
      const attempt = Symbol(pid)
      newest.set(pid, attempt)
      let superseded = false
      const found = await restorer.restore(pid, offset).finally(() => {
        superseded = newest.get(pid) !== attempt
        if (!superseded) newest.delete(pid)
      })
      // socket.io types it Session, yet takes null for "not restored". A superseded attempt restored late would
      // close the socket its client's newer connection opened under the same id ("io server disconnect": no retry).
      if (!found || superseded) return null as unknown as Session
      // A reconnection can come before the server noticed the old connection died: that socket holds
      // the same id, and closing it later would take the new one out of its room.
      const stale = (this.nsp as { sockets: Map<string, { id: string }> }).sockets.get(found.sid)
      if (stale) restorer.replace(stale)
      return { sid: found.sid, pid, rooms: [], data: found.data, missedPackets: [] }
    }
  }
}
