import type { Connection } from '../domain/service/service.js'
import { noTracer, type Tracer } from '../domain/tracing.js'
import { Channel, CombinedChannel, type Delivery, type Publisher } from './channel.js'
import type { HookContext } from './hook-context.js'
import { withoutFields } from './protected-fields.js'
import type { LiveService, ServiceEntry } from './service-entry.js'

/**
 * Service events, channels and publishing: an event is emitted to the service's local listeners and,
 * when a transport listens, handed to the channels its publisher picks as deliveries (one per
 * distinct payload). Transports subscribe with `onDelivery` (through their Gateway).
 *
 * Traced, each event is published in a span `<path> <event> publish` of its own trace, linked to the
 * span of the write that caused it — on this instance, or on another one when the store carried the
 * writer's trace context (RethinkDB's event log).
 */
export class ServiceEvents {
  private readonly namedChannels = new Map<string, Channel>()
  private readonly publishers = new Map<string, Publisher>()
  private readonly deliveryListeners: ((delivery: Delivery) => void)[] = []

  constructor(private readonly tracer: Tracer = noTracer) {}

  /** A named channel (created on first use), or several as one. */
  channel(names: string[]): Channel {
    if (names.length === 1) {
      let channel = this.namedChannels.get(names[0]!)
      if (!channel) this.namedChannels.set(names[0]!, (channel = new Channel()))
      return channel
    }
    return new CombinedChannel(names.map((name) => this.channel([name])))
  }

  get channelNames(): string[] {
    return [...this.namedChannels.keys()]
  }

  /** A disconnected connection leaves every named channel. */
  leaveAll(connection: Connection): void {
    for (const channel of this.namedChannels.values()) channel.leave(connection)
  }

  /** Sets the app-wide publisher of one event, or of all (`'*'`) when given a function only. */
  publish(eventOrPublisher: string | Publisher, publisher?: Publisher): void {
    setPublisher(this.publishers, eventOrPublisher, publisher)
  }

  publishOn(entry: ServiceEntry, eventOrPublisher: string | Publisher, publisher?: Publisher): void {
    setPublisher(entry.publishers, eventOrPublisher, publisher)
  }

  onDelivery(listener: (delivery: Delivery) => void): () => void {
    this.deliveryListeners.push(listener)
    return () => {
      const index = this.deliveryListeners.indexOf(listener)
      if (index >= 0) this.deliveryListeners.splice(index, 1)
    }
  }

  /**
   * Emits a service event locally and publishes it to the channels its publisher picks. `trace`: the
   * `traceparent` of the write that caused it, which the publication's span links to.
   */
  emit(entry: ServiceEntry, event: string, data: unknown, context?: HookContext, trace?: string): void {
    if (!this.tracer.enabled) return this.publishNow(entry, event, data, context)
    this.tracer.run(`${entry.path} ${event} publish`, {
      kind: 'producer',
      parent: null,
      links: trace === undefined ? [] : [trace],
      attributes: { 'messaging.system': 'plumage', 'messaging.operation.type': 'send', 'messaging.destination.name': `${entry.path} ${event}` }
    }, () => this.publishNow(entry, event, data, context))
  }

  private publishNow(entry: ServiceEntry, event: string, data: unknown, context?: HookContext): void {
    entry.emitter.emit(event, data, context)
    if (this.deliveryListeners.length === 0 || !entry.events.has(event)) return
    const publisher = entry.publishers.get(event) ?? entry.publishers.get('*') ?? this.publishers.get(event) ?? this.publishers.get('*')
    if (!publisher) return
    const chosen = publisher(data, context)
    const channels = chosen ? (Array.isArray(chosen) ? chosen : [chosen]) : []
    const seen = new Set<Connection>()
    const groups = new Map<unknown, Connection[]>()
    for (const channel of channels) {
      const payload = channel.data ?? data
      for (const connection of channel.connections) {
        if (seen.has(connection)) continue
        seen.add(connection)
        const group = groups.get(payload)
        if (group) group.push(connection)
        else groups.set(payload, [connection])
      }
    }
    for (const [payload, connections] of groups) {
      const delivery: Delivery = { path: entry.path, event, data: payload, connections }
      for (const listener of this.deliveryListeners) listener(delivery)
    }
  }

  /**
   * The event of a finished call, one per record; live services publish from their store instead.
   * `trace`: the call's span, which the events link to.
   */
  emitResult(entry: ServiceEntry, context: HookContext, trace?: string): void {
    if (context.event === null || entry.live) return
    const payload = context.dispatch ?? context.result
    if (payload === undefined || payload === null) return
    if (Array.isArray(payload)) for (const item of payload) this.emit(entry, context.event, item, context, trace)
    else this.emit(entry, context.event, payload, context, trace)
  }

  /**
   * Follows a live service's store: every change becomes a service event, with the protected
   * fields removed (they never passed through the `protect` hooks). Resolves once the stream is live.
   */
  async follow(entry: ServiceEntry, hidden: () => ReadonlySet<string>): Promise<void> {
    if (!entry.live || entry.unwatch) return
    const live = entry.service as LiveService
    entry.unwatch = live.watch(({ event, record, trace }) => {
      const fields = hidden()
      this.emit(entry, event, fields.size > 0 ? withoutFields(record, fields) : record, undefined, trace)
    })
    await live.whenWatching?.()
  }

  /**
   * `service.emit(event, data)`: a live store carries custom events to every process, this one
   * included (the store logs failures); otherwise the event is emitted here.
   */
  emitCustom(entry: ServiceEntry, event: string, data: unknown, context?: HookContext): void {
    const live = entry.live ? (entry.service as LiveService) : undefined
    if (live?.publish) void live.publish(event, data).catch(() => undefined)
    else this.emit(entry, event, data, context, this.tracer.traceparent())
  }
}

function setPublisher(target: Map<string, Publisher>, eventOrPublisher: string | Publisher, publisher?: Publisher): void {
  if (typeof eventOrPublisher === 'function') target.set('*', eventOrPublisher)
  else if (publisher) target.set(eventOrPublisher, publisher)
}
