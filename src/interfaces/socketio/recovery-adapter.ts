import { Adapter, type PrivateSessionId, type Session } from 'socket.io-adapter'

/** What the adapter needs of the transport: whether a session may resume, and how to drop a stale socket. */
export interface SessionRestorer {
  /**
   * The session's socket id and what the transport needs to restore it (handed to the new socket as
   * its `data`), or undefined when the session cannot be resumed from `offset`.
   */
  restore(pid: string, offset: string): Promise<{ sid: string; data: unknown } | undefined>
  /**
   * A socket still open under a session that is resumed elsewhere: its client is gone and comes back as the new one.
   */
  replace(stale: { id: string }): void
}

/**
 * socket.io's connection state recovery with the app's sessions and event history instead of
 * socket.io's in-process session store: `restoreSession` asks the gateway (through `restorer`),
 * which may answer for a session another instance kept. Sessions are saved by the gateway when
 * they change, before the client learns its ids, so `persistSession` stays the base Adapter's
 * no-op; missed packets are not returned here but replayed by the gateway once the socket is
 * open, with its channels computed again.
 */
export function recoveryAdapter(restorer: SessionRestorer): typeof Adapter {
  return class RecoveryAdapter extends Adapter {
    override async restoreSession(pid: PrivateSessionId, offset: string): Promise<Session> {
      const found = await restorer.restore(pid, offset)
      // socket.io's own typing says Session, yet it treats a null answer as "not restored" (as the base Adapter
      // returns).
      if (!found) return null as unknown as Session
      // A reconnection can come before the server noticed the old connection died: that socket holds
      // the same id, and closing it later would take the new one out of its room.
      const stale = (this.nsp as { sockets: Map<string, { id: string }> }).sockets.get(found.sid)
      if (stale) restorer.replace(stale)
      return { sid: found.sid, pid, rooms: [], data: found.data, missedPackets: [] }
    }
  }
}
