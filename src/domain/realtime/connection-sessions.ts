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
}
export const ConnectionSessions = Symbol.for('ConnectionSessions')
