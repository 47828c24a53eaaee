import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import { FEED_STATES, type FeedState, type Metrics } from '../../domain/metrics.js'
import { FastCounter, FastHistogram, type CounterSeries, type HistogramSeries } from './fast-histogram.js'
import { LabelChildren } from './label-children.js'

/** OpenTelemetry's advised buckets for `http.server.request.duration` (seconds). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
/** OpenTelemetry's advised buckets for `db.client.operation.duration` (seconds). */
const DB_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10]

/**
 * prom-client's process and Node.js metrics, collected once per process: they describe the
 * process, not one app, and each collection starts its own event-loop and GC monitors.
 */
let processRegistry: Registry | undefined

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

export interface PrometheusMetricsOptions {
  /** Process and Node.js metrics (CPU, memory, event loop lag, GC…) — default true. */
  defaultMetrics?: boolean
  /** Epoch ms, for the event-log lag (default Date.now; the app's Clock in the composition root). */
  now?: () => number
}

/**
 * The metrics port on prom-client, in a registry of its own (two apps in one process, as tests
 * build them, do not collide), rendered with the process metrics. Names follow OpenTelemetry's semantic conventions
 * where there is
 * one (`http_server_request_duration_seconds`, `db_client_operation_duration_seconds`, with their
 * attribute names as labels); the others are `plumage_*`. Children of each label combination are
 * kept, so a request costs a few map lookups and the update, no labels object; the three
 * histograms of the request path are FastHistograms (a few additions per observation), the event counters FastCounters.
 */
export class PrometheusMetrics implements Metrics {
  readonly enabled = true
  readonly registry = new Registry()
  private readonly http: LabelChildren<HistogramSeries>
  private readonly calls: LabelChildren<HistogramSeries>
  private readonly connections: LabelChildren<Gauge.Internal<string>>
  private readonly droppedSlow: Counter<'transport'>
  private readonly published: LabelChildren<CounterSeries>
  private readonly delivered: LabelChildren<CounterSeries>
  private readonly queries: LabelChildren<HistogramSeries>
  private readonly feeds: Gauge<'table' | 'state'>
  private readonly failedLogins: Counter
  private readonly throttledLogins: Counter
  /** The time of the newest applied event per table (epoch ms); the lag is computed when scraped. */
  private readonly newestEvent = new Map<string, number>()
  private readonly process?: Registry

  constructor(options: PrometheusMetricsOptions = {}) {
    const registers = [this.registry]
    const now = options.now ?? Date.now
    if (options.defaultMetrics ?? true) this.process = processMetrics()
    this.http = new FastHistogram(
      'http_server_request_duration_seconds',
      'Duration of HTTP server requests, by method, route template and status.',
      ['http_request_method', 'http_route', 'http_response_status_code'],
      HTTP_BUCKETS,
      this.registry
    ).children
    this.calls = new FastHistogram(
      'plumage_service_call_duration_seconds',
      'Duration of service calls from a transport (rest, socketio), by service, method and outcome (ok or the error name).',
      ['service', 'method', 'transport', 'outcome'],
      HTTP_BUCKETS,
      this.registry
    ).children
    const connections = new Gauge({
      name: 'plumage_connections_open',
      help: 'Open real-time connections (sockets), by transport.',
      labelNames: ['transport'],
      registers
    })
    this.connections = new LabelChildren((values) => connections.labels(...values))
    this.droppedSlow = new Counter({
      name: 'plumage_connections_dropped_slow_total',
      help: 'Real-time connections disconnected for holding more unsent output than allowed (a client that stopped reading).',
      labelNames: ['transport'],
      registers
    })
    this.published = new FastCounter(
      'plumage_events_published_total',
      'Service events published to channels, by service and event.',
      ['service', 'event'],
      this.registry
    ).children
    this.delivered = new FastCounter(
      'plumage_events_delivered_total',
      'Service events sent to real-time connections (one per connection), by service and event.',
      ['service', 'event'],
      this.registry
    ).children
    const newestEvent = this.newestEvent
    new Gauge({
      name: 'plumage_event_log_lag_seconds',
      help: "Now minus the time of the newest event applied from the store's event log, by table (grows while a table has no writes).",
      labelNames: ['table'],
      registers,
      collect() {
        const at = now()
        for (const [table, time] of newestEvent) this.set({ table }, Math.max(0, (at - time) / 1000))
      }
    })
    this.feeds = new Gauge({
      name: 'plumage_feed_state',
      help: 'State of each store change feed: 1 for its current state (connecting, live, stopped), 0 for the others.',
      labelNames: ['table', 'state'],
      registers
    })
    this.queries = new FastHistogram(
      'db_client_operation_duration_seconds',
      'Duration of store operations, by store adapter, collection and operation.',
      ['db_system_name', 'db_collection_name', 'db_operation_name'],
      DB_BUCKETS,
      this.registry
    ).children
    this.failedLogins = new Counter({
      name: 'plumage_logins_failed_total',
      help: 'Logins refused for a wrong username or password.',
      registers
    })
    this.throttledLogins = new Counter({
      name: 'plumage_logins_throttled_total',
      help: 'Logins refused with 429 after too many failures.',
      registers
    })
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.http.get3(method, route, status).observe(seconds)
  }

  serviceCall(service: string, method: string, transport: string, outcome: string, seconds: number): void {
    this.calls.get4(service, method, transport, outcome).observe(seconds)
  }

  connectionOpened(transport: string): void {
    this.connections.get1(transport).inc()
  }

  connectionClosed(transport: string): void {
    this.connections.get1(transport).dec()
  }

  eventPublished(service: string, event: string): void {
    this.published.get2(service, event).inc()
  }

  connectionDroppedSlow(transport: string): void {
    this.droppedSlow.inc({ transport })
  }

  eventDelivered(service: string, event: string, connections: number): void {
    this.delivered.get2(service, event).inc(connections)
  }

  eventApplied(table: string, time: number): void {
    if (time > (this.newestEvent.get(table) ?? -Infinity)) this.newestEvent.set(table, time)
  }

  feedState(table: string, state: FeedState): void {
    for (const each of FEED_STATES) this.feeds.set({ table, state: each }, each === state ? 1 : 0)
  }

  storeQuery(store: string, collection: string, operation: string, seconds: number): void {
    this.queries.get3(store, collection, operation).observe(seconds)
  }

  loginFailed(): void {
    this.failedLogins.inc()
  }

  loginThrottled(): void {
    this.throttledLogins.inc()
  }

  gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read())
      }
    })
  }

  async render(): Promise<{ contentType: string; body: string }> {
    const registry = this.process ? Registry.merge([this.process, this.registry]) : this.registry
    return { contentType: this.registry.contentType, body: await registry.metrics() }
  }
}
