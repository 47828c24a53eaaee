import type { CallInfo, ConnectionChange, Extension, PublishInfo } from '../domain/service/extension.js'
import type { PublishedEvent } from '../domain/realtime/event-history.js'
import type { Connection } from '../domain/service/service.js'
import type { Delivery } from './channel.js'
import type { DeliveryStage } from './event-stages.js'
import type { ConnectionExtension, GatewayAccess } from './transport/connection-extension.js'

type Around<I, T> = (info: I, next: () => T) => T

/**
 * The app's extensions (domain/service/extension.ts), composed once per change: each around-hook wraps the
 * next, the first added outermost, and each observer list is read as a plain array. Without extensions every
 * member is `undefined` or empty, so the kernel's paths test one field and pay nothing more.
 */
export class Extensions {
  private readonly list: AppExtension[] = []
  /** Around every call; undefined when no extension wraps calls. */
  aroundCall?: <T>(call: CallInfo, next: () => Promise<T>) => Promise<T>
  /** Around every publication; undefined when no extension wraps publications. */
  aroundPublish?: (event: PublishInfo, next: () => void) => void
  published: ((path: string, event: string) => void)[] = []
  delivered: ((path: string, event: string, connections: number) => void)[] = []
  connections: ((change: ConnectionChange, transport: string, connection?: Connection) => void)[] = []
  observers: ((event: PublishedEvent, offset: string | undefined) => void)[] = []
  /** The record of published events; undefined when no extension keeps one. */
  record?: (event: PublishedEvent) => string
  /** The connection extension's factory; undefined when connections end with their socket. */
  connectionExtension?: (access: GatewayAccess) => ConnectionExtension
  /** The delivery stages, each applied to what the one before left; undefined when no extension has one. */
  deliver?: DeliveryStage

  add(extension: AppExtension): void {
    if (extension.record && this.record) throw new Error('Only one extension may record published events')
    if (extension.connections && this.connectionExtension) throw new Error('Only one connection extension is allowed')
    this.list.push(extension)
    this.record ??= extension.record?.bind(extension)
    this.connectionExtension ??= extension.connections?.bind(extension)
    this.aroundCall = compose<CallInfo, Promise<unknown>>(
      this.list.flatMap((e) => (e.aroundCall ? [e.aroundCall.bind(e)] : []))
    ) as Extensions['aroundCall']
    this.aroundPublish = compose(this.list.flatMap((e) => (e.aroundPublish ? [e.aroundPublish.bind(e)] : [])))
    this.published = this.list.flatMap((e) => (e.published ? [e.published.bind(e)] : []))
    this.delivered = this.list.flatMap((e) => (e.delivered ? [e.delivered.bind(e)] : []))
    this.connections = this.list.flatMap((e) => (e.connection ? [e.connection.bind(e)] : []))
    this.observers = this.list.flatMap((e) => (e.observe ? [e.observe.bind(e)] : []))
    this.deliver = chainStages(this.list.flatMap((e) => (e.deliver ? [e.deliver.bind(e)] : [])))
  }

  async teardown(): Promise<void> {
    for (const extension of this.list) await extension.teardown?.()
  }

  /** Tells the connection observers. */
  connection(change: ConnectionChange, transport: string, connection?: Connection): void {
    for (const observe of this.connections) observe(change, transport, connection)
  }
}

/** One around-hook of many, the first outermost; undefined for none, the hook itself for one. */
function compose<I, T>(arounds: Around<I, T>[]): Around<I, T> | undefined {
  if (arounds.length <= 1) return arounds[0]
  return arounds.reduceRight<Around<I, T>>(
    (inner, outer) => (info, next) => outer(info, () => inner(info, next)),
    (_info, next) => next()
  )
}

/** Delivery stages one after the other; undefined for none, the stage itself for one. */
function chainStages(stages: DeliveryStage[]): DeliveryStage | undefined {
  if (stages.length <= 1) return stages[0]
  return async (delivery, event) => {
    let deliveries = [delivery]
    for (const stage of stages) {
      const next: Delivery[] = []
      for (const part of deliveries) next.push(...(await stage(part, event)))
      deliveries = next
    }
    return deliveries
  }
}

/**
 * What an application-layer module may plug in besides the domain's Extension: a record of published events
 * (deliveries then carry each event's offset), a connection extension for each transport's gateway, and a
 * teardown run by `app.teardown()`. Connection state recovery (src/application/recovery) is one.
 */
export interface AppExtension extends Extension {
  /** Records a published event and answers its offset (at most one extension records). */
  record?(event: PublishedEvent): string
  /** Hears every event a service declares, as published, in order, with its offset (if recorded), channels or not. */
  observe?(event: PublishedEvent, offset: string | undefined): void
  /** The connection extension of one transport's gateway, made when the transport first needs it. */
  connections?(access: GatewayAccess): ConnectionExtension
  /**
   * Between an event's channels and its transports (rules): splits one delivery among its recipients, each part with
   * its own payload, or drops recipients. May be async: deliveries keep the order events were published in. Also
   * applied to events replayed to a recovering connection.
   */
  deliver?(delivery: Delivery, event: PublishedEvent): Delivery[] | Promise<Delivery[]>
  teardown?(): Promise<void>
}
