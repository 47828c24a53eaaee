import { errorsByName, FeathersError } from './errors/errors.js'

/**
 * The metrics port: what the application, the transports and the stores report for operators
 * (README "Metrics"). Every label value passed here must come from a small set — a route template,
 * a registered service path, a table name — never from a raw URL, an id or a user's input, so the
 * number of series stays bounded. Durations are in seconds. Calls are on hot paths: an adapter
 * must record without allocating more than it must, and never throw.
 */
export interface Metrics {
  /** False for the no-op port (METRICS=false): transports then skip timing and serve no endpoint. */
  readonly enabled: boolean
  /** One HTTP request answered: its verb, route template (e.g. `/messages/:id`), status and duration. */
  httpRequest(method: string, route: string, status: number, seconds: number): void
  /** One service call from a transport; `outcome` is `ok` or the error's name (`NotFound`, `GeneralError`…). */
  serviceCall(service: string, method: string, transport: string, outcome: string, seconds: number): void
  /** A real-time connection (a socket) opened or closed on a transport. */
  connectionOpened(transport: string): void
  connectionClosed(transport: string): void
  /** A real-time connection was disconnected for holding more unsent output than allowed (it stopped reading). */
  connectionDroppedSlow(transport: string): void
  /** A service event was published (handed to the channels). */
  eventPublished(service: string, event: string): void
  /** A published event was sent to `connections` connections of a transport. */
  eventDelivered(service: string, event: string, connections: number): void
  /** An event of the store's event log was applied; `time` is the event's own time (epoch ms). */
  eventApplied(table: string, time: number): void
  /** A store change feed changed state (FeedState) for one table. */
  feedState(table: string, state: FeedState): void
  /** One store operation (`find`, `create`…) on a collection, by the store adapter (`memory`, `rethinkdb`). */
  storeQuery(store: string, collection: string, operation: string, seconds: number): void
  /** A login failed (wrong username or password). */
  loginFailed(): void
  /** A login was refused with 429 (too many failures). */
  loginThrottled(): void
  /** A gauge read at each collection, for a module's state (live queries' views); absent from the no-op port. */
  gauge?(name: string, help: string, read: () => number): void
  /** Every metric in a text exposition format, for `GET /metrics`. */
  render(): Promise<{ contentType: string; body: string }>
}
export const Metrics = Symbol.for('Metrics')

/** A change feed: opening (or re-opening after a loss), live, or stopped. */
export type FeedState = 'connecting' | 'live' | 'stopped'
export const FEED_STATES: readonly FeedState[] = ['connecting', 'live', 'stopped']

/** METRICS=false, and whatever is built without the composition root: records nothing. */
export const noMetrics: Metrics = {
  enabled: false,
  httpRequest() {},
  serviceCall() {},
  connectionOpened() {},
  connectionClosed() {},
  connectionDroppedSlow() {},
  eventPublished() {},
  eventDelivered() {},
  eventApplied() {},
  feedState() {},
  storeQuery() {},
  loginFailed() {},
  loginThrottled() {},
  render: async () => ({ contentType: 'text/plain; charset=utf-8', body: '' })
}

/**
 * The `outcome` label of a failed call: the Feathers error's name (`NotFound`, `Forbidden`…);
 * an unexpected error is `GeneralError`, as its caller sees it; an error class of the app's own
 * is `FeathersError`, so its names do not add series.
 */
export function errorOutcome(error: unknown): string {
  if (!(error instanceof FeathersError)) return 'GeneralError'
  return Object.hasOwn(errorsByName, error.name) ? error.name : 'FeathersError'
}
