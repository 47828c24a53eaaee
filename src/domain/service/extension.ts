import type { Connection } from './service.js'

/** A service call as the extensions around it see it. */
export interface CallInfo {
  /** The service's registered path. */
  readonly path: string
  readonly method: string
  /** Whether the service exposes `method` to transports (a client can name any method). */
  readonly exposed: boolean
  /** The transport the call came through; undefined for a call made on the server. */
  readonly provider?: string
}

/** An event being published, as the extensions around its publication see it. */
export interface PublishInfo {
  readonly path: string
  readonly event: string
  /**
   * What caused it: a call on this instance (the call is still the active unit of work), a change the store
   * reported (possibly written by another instance), or `service.emit`.
   */
  readonly cause: 'call' | 'store' | 'custom'
  /** The W3C `traceparent` of the write that caused it, when the store carried one. */
  readonly trace?: string
}

/** What happened to a real-time connection, for extensions that count or follow connections. */
export type ConnectionChange = 'opened' | 'closed' | 'dropped-slow'

/**
 * What an optional module plugs into the app (README "Modules"): around-hooks on calls and on event
 * publication, and observers of events delivered and of connections. Every member is optional; an app
 * without extensions pays for none of them. Extensions run in the order they were added, the first one
 * outermost.
 */
export interface Extension {
  /** Around every service call (from a transport or on the server): `next` runs hooks and method, emits events. */
  aroundCall?<T>(call: CallInfo, next: () => Promise<T>): Promise<T>
  /** Around one event's publication: `next` emits it to the service's listeners and hands it to the channels. */
  aroundPublish?(event: PublishInfo, next: () => void): void
  /** An event of the service's own (one it declares) was published. */
  published?(path: string, event: string): void
  /** A published event was sent to `connections` connections of one transport. */
  delivered?(path: string, event: string, connections: number): void
  /** A real-time connection of `transport` changed. */
  connection?(change: ConnectionChange, transport: string, connection?: Connection): void
}
