import type { EventEmitter } from 'node:events'
import type { LoginResult } from '../../domain/auth/authentication-result.js'
import type { Clock } from '../../domain/clock.js'
import type { ConnectionSession } from '../../domain/realtime/connection-sessions.js'
import type { RecordedEvent } from '../../domain/realtime/event-history.js'
import type { AuthenticationRequest, Connection } from '../../domain/service/service.js'
import type { Delivery } from '../channel.js'

/**
 * Why a connection went away: closed on purpose (no coming back), lost (may come back within the window), replaced by
 * its recovery elsewhere.
 */
export type CloseReason = 'closed' | 'lost' | 'replaced'

/** A session found, still valid and with every event after the client's offset in the history. */
export interface Restorable {
  session: ConnectionSession
  /** The stored login, verified again; undefined for an anonymous connection. */
  login?: LoginResult
  /** The offset the client resumes from, and the events after it. */
  offset: string
  missed: RecordedEvent[]
}

/** What a gateway lends its connection extension. */
export interface GatewayAccess {
  readonly clock: Clock
  /** The app: its `login` and `logout` events. */
  readonly events: EventEmitter
  /** Logs in with a stored login as an external call would; rejects when it no longer holds. */
  verify(authentication: AuthenticationRequest, provider: string): Promise<LoginResult>
  /** Opens a connection (the app's `connection` event: channels pick it up). */
  open(connection: Connection): void
  /** What recorded events would deliver to the connection now (their publishers run again). */
  missedBy(connection: Connection, events: readonly RecordedEvent[]): Promise<Delivery[]>
  /** Hands one delivery to the transport. */
  deliver(delivery: Delivery): void
  /** Tells the transport the connection has seen everything up to `offset`. */
  seen(connection: Connection, offset: string): void
}

/**
 * The kernel's extension point for connections that outlive their socket: connection state recovery
 * (src/application/recovery) implements it. A gateway consults it when a connection closes and before it
 * delivers; a transport that can resume connections (socket.io) reaches it as `gateway.recovery`.
 */
export interface ConnectionExtension {
  /** Whether any connection is being restored now (deliveries are then checked one by one). */
  readonly restoringAny: boolean
  /** Holds a live delivery for a connection being restored; answers whether it did. */
  hold(connection: Connection, delivery: Delivery): boolean
  /** A connection went away: a lost one's session waits for the window, a closed one's is removed. */
  forget(connection: Connection, reason: CloseReason): Promise<void>
  /** The transport stopped. */
  detach(): void
  /** The offset of the latest event: a new connection has seen everything up to it. */
  head(): string
  /** Keeps a new connection's session; call it before the client learns the ids. */
  remember(connection: Connection, ids: { id: string; connectionId: string }): Promise<void>
  /** The session a client asks to resume, when it can be: not expired, its login still valid, nothing missed pruned. */
  restorable(id: string, offset: string, provider: string): Promise<Restorable | undefined>
  /** Opens a recovered connection with its login, channels and missed events. */
  restore(connection: Connection, restorable: Restorable): Promise<void>
}
