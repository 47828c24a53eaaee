import type { PublishInfo } from '../domain/service/extension.js'
import type { PublishedContext, PublishedEvent, RecordedEvent } from '../domain/realtime/event-history.js'
import type { Connection } from '../domain/service/service.js'
import { Channel, CombinedChannel, type Delivery, type Publisher } from './channel.js'
import { eventContext, runResolvers, type EventResolvers } from './event-stages.js'
import { Extensions } from './extensions.js'
import type { HookApp, HookContext } from './hook-context.js'
import { withoutFields } from './protected-fields.js'
import type { LiveService, ServiceEntry } from './service-entry.js'

/** What ServiceEvents needs to publish recorded events again (connection state recovery), and its extensions. */
export interface ServiceEventsOptions {
  /** Around publications, observers of them, and the record of published events (the app's). */
  extensions?: Extensions
  /** The app and its services: a recorded event's publisher is found again and given them in its context. */
  app?: HookApp
  entry?: (path: string) => ServiceEntry | undefined
  /** The event resolvers of a service's hooks (event-stages.ts); none when not given. */
  resolvers?: (entry: ServiceEntry) => EventResolvers
  /** An event whose resolvers or delivery stages failed: it was not delivered (never delivered unresolved). */
  failed?: (error: unknown, event: { path: string; event: string }) => void
}

const NO_RESOLVERS: EventResolvers = { result: [], external: [] }

/**
 * Service events, channels and publishing: an event is emitted to the service's local listeners and,
 * when a transport listens, handed to the channels its publisher picks as deliveries (one per
 * distinct payload). Transports subscribe with `onDelivery` (through their Gateway). When an extension
 * records events (connection recovery), every published event is recorded first and its deliveries carry
 * its offset; `missedBy` publishes recorded ones again. Extensions around publication (tracing) wrap
 * each event's publication; none, and it is published as it is.
 *
 * Two stages may sit on the way, both possibly async (event-stages.ts): the resolvers a live service's hooks carry
 * (its store's events never pass through hooks: `result` ones run once per event, `external` ones per delivery) and
 * the extensions' delivery stages (rules split a delivery among recipients). Events then still leave in the order
 * they were published: while any publication is pending, the next waits behind it (`tail`). Without stages,
 * publication is synchronous, as it always was.
 */
export class ServiceEvents {
  private readonly namedChannels = new Map<string, Channel>()
  private readonly publishers = new Map<string, Publisher>()
  private readonly deliveryListeners: ((delivery: Delivery) => void)[] = []
  private readonly extensions: Extensions
  /** The last pending publication while one is; later ones wait behind it. */
  private tail?: Promise<void>

  constructor(private readonly options: ServiceEventsOptions = {}) {
    this.extensions = options.extensions ?? new Extensions()
  }

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

  private publisherOf(entry: ServiceEntry, event: string): Publisher | undefined {
    return (
      entry.publishers.get(event) ?? entry.publishers.get('*') ?? this.publishers.get(event) ?? this.publishers.get('*')
    )
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
   * Emits a service event locally and publishes it to the channels its publisher picks, inside the
   * extensions around publication. `trace`: the `traceparent` of the write that caused it, when the store carried it.
   */
  emit(
    entry: ServiceEntry,
    event: string,
    data: unknown,
    context?: HookContext,
    cause: PublishInfo['cause'] = 'call',
    trace?: string
  ): void {
    if (!this.tail && !this.extensions.deliver && this.resolversOf(entry).external.length === 0)
      return void this.publishAround(entry, event, data, context, cause, trace)
    this.inOrder(entry, event, () => this.publishAround(entry, event, data, context, cause, trace))
  }

  /** Publishes an event inside the extensions around publication; the promise of its async stages, if any. */
  private publishAround(
    entry: ServiceEntry,
    event: string,
    data: unknown,
    context: HookContext | undefined,
    cause: PublishInfo['cause'],
    trace?: string
  ): void | Promise<void> {
    const around = this.extensions.aroundPublish
    if (!around) return this.publishNow(entry, event, data, context)
    let pending: void | Promise<void> = undefined
    around({ path: entry.path, event, cause, ...(trace === undefined ? {} : { trace }) }, () => {
      pending = this.publishNow(entry, event, data, context)
    })
    return pending
  }

  /** Resolves once every publication so far was handed to the delivery listeners (at once without pending stages). */
  async idle(): Promise<void> {
    while (this.tail) await this.tail
  }

  /** Runs `publish` once every publication before it is done: now when none is pending. */
  private inOrder(entry: ServiceEntry, event: string, publish: () => void | Promise<void>): void {
    const report = (error: unknown) => this.options.failed?.(error, { path: entry.path, event })
    let pending: void | Promise<void>
    if (this.tail) pending = this.tail.then(publish)
    else {
      try {
        pending = publish()
      } catch (error) {
        return report(error)
      }
    }
    if (!pending) return
    const tail: Promise<void> = pending.catch(report).then(() => {
      if (this.tail === tail) this.tail = undefined
    })
    this.tail = tail
  }

  private resolversOf(entry: ServiceEntry): EventResolvers {
    return this.options.resolvers?.(entry) ?? NO_RESOLVERS
  }

  private publishNow(entry: ServiceEntry, event: string, data: unknown, context?: HookContext): void | Promise<void> {
    entry.emitter.emit(event, data, context)
    if (!entry.events.has(event)) return
    for (const observe of this.extensions.published) observe(entry.path, event)
    const publisher = this.deliveryListeners.length > 0 ? this.publisherOf(entry, event) : undefined
    if (!publisher && this.extensions.observers.length === 0) return
    const external = this.resolversOf(entry).external
    const staging = this.extensions.deliver !== undefined || external.length > 0
    // The event as recorded and as delivery stages see it: made only when one of them is there.
    const published: PublishedEvent | undefined =
      this.extensions.record || staging || this.extensions.observers.length > 0
        ? { path: entry.path, event, data, ...(context ? { context: publishedContext(context) } : {}) }
        : undefined
    const offset = published && this.extensions.record?.(published)
    for (const observe of this.extensions.observers) observe(published!, offset)
    if (!publisher) return
    const deliveries: Delivery[] = []
    for (const [payload, connections] of deliveryGroups(channelsOf(publisher(data, context)), data)) {
      deliveries.push(
        offset === undefined
          ? { path: entry.path, event, data: payload, connections }
          : { path: entry.path, event, data: payload, connections, offset }
      )
    }
    if (!staging) return this.hand(deliveries)
    return this.staged(entry, published!, deliveries).then((staged) => this.hand(staged))
  }

  private hand(deliveries: Delivery[]): void {
    for (const delivery of deliveries) for (const listener of this.deliveryListeners) listener(delivery)
  }

  /**
   * Deliveries through the extensions' delivery stages (rules: split per recipient group), then each through the
   * service's external resolvers, as its first recipient would have it resolved.
   */
  private async staged(entry: ServiceEntry, published: PublishedEvent, deliveries: Delivery[]): Promise<Delivery[]> {
    const stage = this.extensions.deliver
    let staged = deliveries
    if (stage) staged = (await Promise.all(deliveries.map((delivery) => stage(delivery, published)))).flat()
    const external = this.resolversOf(entry).external
    if (external.length === 0 || !this.options.app) return staged
    const app = this.options.app
    return Promise.all(
      staged.map(async (delivery) => {
        const first = delivery.connections[0]
        const data = await runResolvers(external, delivery.data, () =>
          eventContext(app, entry, delivery.event, delivery.data, first)
        )
        return { ...delivery, data }
      })
    )
  }

  /**
   * What these recorded events would deliver to `connection` if they were published now: each
   * event's publisher runs again (on the recorded context, with the app and the service put back)
   * and picks from the channels as they are, the connection's current ones included. Oldest first.
   */
  async missedBy(connection: Connection, events: readonly RecordedEvent[]): Promise<Delivery[]> {
    const deliveries: Delivery[] = []
    for (const recorded of events) {
      const { path, event, data, context, offset } = recorded
      const entry = this.options.entry?.(path)
      const publisher = entry && entry.events.has(event) ? this.publisherOf(entry, event) : undefined
      if (!publisher) continue
      const replayed = context && { ...context, app: this.options.app, service: entry!.handle, type: 'after', http: {} }
      const channel = channelsOf(publisher(data, replayed)).find((candidate) => candidate.connections.has(connection))
      if (!channel) continue
      const delivery: Delivery = { path, event, data: channel.data ?? data, connections: [connection], offset }
      // The stages a live delivery passes (rules, external resolvers) apply to a replayed one too.
      if (!this.extensions.deliver && this.resolversOf(entry!).external.length === 0) deliveries.push(delivery)
      else deliveries.push(...(await this.staged(entry!, recorded, [delivery])))
    }
    return deliveries
  }

  /** The event of a finished call, one per record; live services publish from their store instead. */
  emitResult(entry: ServiceEntry, context: HookContext): void {
    if (context.event === null || entry.live) return
    const payload = context.dispatch ?? context.result
    if (payload === undefined || payload === null) return
    if (Array.isArray(payload)) for (const item of payload) this.emit(entry, context.event, item, context)
    else this.emit(entry, context.event, payload, context)
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
      const data = fields.size > 0 ? withoutFields(record, fields) : record
      const { result } = this.resolversOf(entry)
      if (result.length === 0 || !this.options.app) return this.emit(entry, event, data, undefined, 'store', trace)
      // Resolved at once (events resolve side by side), published in order.
      const app = this.options.app
      const resolved = runResolvers(result, data, () => eventContext(app, entry, event, data))
      resolved.catch(() => undefined) // reported once, where it is published (inOrder)
      this.inOrder(entry, event, () =>
        resolved.then((value) => this.publishAround(entry, event, value, undefined, 'store', trace))
      )
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
    else this.emit(entry, event, data, context, 'custom')
  }
}

/**
 * The connections of the chosen channels grouped by the payload they receive, each connection once (the first
 * channel it is in decides its payload). One channel, the common case (everything to 'authenticated'), is copied
 * as it is: with 10,000 connections, the set that finds connections in several channels was a pass of its own.
 */
function deliveryGroups(channels: Channel[], data: unknown): Map<unknown, Connection[]> {
  if (channels.length === 1) {
    const [channel] = channels as [Channel]
    return channel.connections.size === 0
      ? new Map()
      : new Map([[channel.data ?? data, Array.from(channel.connections)]])
  }
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
  return groups
}

function channelsOf(chosen: ReturnType<Publisher>): Channel[] {
  return chosen ? (Array.isArray(chosen) ? chosen : [chosen]) : []
}

/**
 * What a publisher may read of a call once it is over, as plain data: the call's input data is
 * left out (it may hold a password), and `result` is what external callers received.
 */
function publishedContext(context: HookContext): PublishedContext {
  const { provider, user, query, route, authenticated } = context.params
  const params: PublishedContext['params'] = {}
  if (provider !== undefined) params.provider = provider
  if (user !== undefined) params.user = user
  if (query !== undefined) params.query = query
  if (route !== undefined) params.route = route
  if (authenticated !== undefined) params.authenticated = authenticated
  return {
    path: context.path,
    method: context.method,
    event: context.event ?? '',
    ...(context.id !== undefined ? { id: context.id } : {}),
    result: context.dispatch ?? context.result,
    params
  }
}

function setPublisher(
  target: Map<string, Publisher>,
  eventOrPublisher: string | Publisher,
  publisher?: Publisher
): void {
  if (typeof eventOrPublisher === 'function') target.set('*', eventOrPublisher)
  else if (publisher) target.set(eventOrPublisher, publisher)
}
