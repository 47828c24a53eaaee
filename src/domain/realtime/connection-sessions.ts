import type { AuthenticationRequest } from '../service/service.js'

/**
 * What a real-time connection's transport needs to restore it after a dropped connection: its
 * private session id (which only the client knows), its public id, and its login to verify again.
 */
export interface ConnectionSession {
  /** The private session id the client sends back to resume (socket.io's `pid`). */
  id: string
  /** The connection's public id, kept on recovery (socket.io's socket id `sid`). */
  connectionId: string
  /** The login to verify again on recovery (`{ strategy: 'jwt', accessToken }`); none when anonymous. */
  authentication?: AuthenticationRequest
  /**
   * The history's head when the login last changed: events before it were published for the
   * connection's previous login, so a recovery never replays them with the new one.
   */
  authenticationOffset?: string
  /** Epoch milliseconds when the connection was lost; undefined while it is connected. */
  disconnectedAt?: number
}

/**
 * The sessions of connections that may come back. A lost connection's session expires once it has
 * been away longer than the recovery window; every instance of the app must read the same sessions
 * for a client to resume on another one.
 */
export interface ConnectionSessions {
  save(session: ConnectionSession): Promise<void>
  /** The session, or undefined when it never existed, was removed or has expired. */
  load(id: string): Promise<ConnectionSession | undefined>
  remove(id: string): Promise<void>
  /**
   * This instance stops saying it is alive (a graceful shutdown, once its connections' sessions were saved as lost):
   * a session it still holds as connected then counts as lost from its last heartbeat, as if it had died.
   */
  close(): Promise<void>
}

/**
 * Sessions shared by several instances are each held by the instance that has their connection, and every instance
 * says it is alive every `heartbeatMs(windowMs)`. One silent for longer than `silentAfterMs(windowMs)` died (or
 * stopped without saving its sessions as lost): the sessions it held as connected count as lost from its last
 * heartbeat, so a client of a killed instance is not restored past the recovery window either. Until then a session
 * still held is connected as far as anyone knows — a client that reconnects elsewhere before its instance noticed
 * the drop resumes.
 */
export function heartbeatMs(windowMs: number): number {
  return Math.min(10_000, Math.max(250, Math.floor(windowMs / 4)))
}

export function silentAfterMs(windowMs: number): number {
  return 3 * heartbeatMs(windowMs)
}

/**
 * When a session held as connected by another instance was lost: that instance's last heartbeat once it has been
 * silent too long (undefined while it beats); `-Infinity` when its heartbeat is gone (purged: long expired).
 */
export function lostWithHolder(lastBeat: number | undefined, now: number, windowMs: number): number | undefined {
  if (lastBeat === undefined) return -Infinity
  return lastBeat + silentAfterMs(windowMs) < now ? lastBeat : undefined
}
export const ConnectionSessions = Symbol.for('ConnectionSessions')
