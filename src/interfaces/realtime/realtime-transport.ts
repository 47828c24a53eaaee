import type { IncomingHttpHeaders, Server } from 'node:http'
import type { App, Gateway } from '../../application/transport/index.js'
import type { Clock } from '../../domain/clock.js'
import type { Logger } from '../../domain/logger.js'
import type { Connection } from '../../domain/service/service.js'

/**
 * A real-time transport (socket.io in src/interfaces/socketio, or your own): it keeps connections on
 * the HTTP engine's server, hands their calls to the app's gateway and delivers the events published
 * to them. The composition root picks one from the `REALTIME` setting and starts it on the server of
 * whichever HTTP engine `HTTP` names; it stops (its gateway shut down) when that server closes.
 */
export interface RealtimeTransport {
  /**
   * Closes every connection's transport as a server that goes away does (SIGTERM): clients
   * reconnect by themselves, to this instance or another, and resume where the transport can.
   */
  dropConnections(): void
  /** Disconnects every connection on purpose: clients do not come back (tests and tools stopping for good). */
  disconnectAll(): void
}

/** The settings every real-time transport honours, built once from configuration (`SOCKET_*`, `CORS_ORIGINS`). */
export interface RealtimeOptions {
  logger?: Logger
  /** Decides when a connection's token expires; the composition root passes the app's Clock. */
  clock?: Clock
  /** Largest accepted message in bytes; a bigger one closes the connection. */
  maxMessageSize?: number
  /**
   * Unsent bytes one connection may hold (a client that stopped reading); past it the connection is
   * disconnected, so it cannot grow the server's memory.
   */
  maxBufferedBytes?: number
  /** Calls one connection may have in flight; more are answered with 429 TooManyRequests. */
  maxConcurrentCalls?: number
  /**
   * How long a dropped connection may stay away and be recovered, in ms; 0 or unset: off. It needs
   * an app that keeps an event history (AppOptions.recovery) and a transport that can resume.
   */
  recoveryWindowMs?: number
  /** Origins allowed to connect from a browser; empty or absent: no CORS, ['*']: any origin. */
  corsOrigins?: string[]
  /** What optional modules wrap around each connection's handshake and each call (tracing: server spans). */
  extensions?: readonly RealtimeExtension[]
}

/**
 * A module's part in a real-time transport (tracing: a server span per handshake and per call). Around-hooks:
 * `next` runs the handshake or the call; the first extension is outermost. `target` is the service and method a
 * call names when the app has them, undefined for anything else.
 */
export interface RealtimeExtension {
  aroundHandshake?(headers: IncomingHttpHeaders, next: () => Promise<void>): Promise<void>
  aroundCall?(target: { path: string; method: string } | undefined, next: () => Promise<unknown>): Promise<unknown>
  /** Socket events it serves besides service calls, by name (live queries' `watch` and `unwatch`). */
  socketEvents?: Readonly<Record<string, SocketEventHandler>>
}

/** One socket event a module serves: its arguments (the ack taken off), and how to answer and send. */
export interface SocketEventCall {
  connection: Connection
  args: unknown[]
  /** The transport's gateway: calls run as the connection's (`gateway.connectionParams`). */
  gateway: Gateway
  /** Answers the event (its ack), once: `(null, result)` or an error. */
  answer(error: unknown, result?: unknown): void
  /** Emits an event of the module's own to this connection (skipped for a client that stopped reading). */
  send(event: string, data: unknown): void
}

/** Serves one socket event; a rejection is answered as the error (a FeathersError's status, 500 otherwise). */
export type SocketEventHandler = (call: SocketEventCall) => Promise<void>

/** Starts a real-time transport for `app` on an HTTP engine's node server (before or after it listens). */
export type RealtimeTransportFactory = (app: App, server: Server, options: RealtimeOptions) => RealtimeTransport
