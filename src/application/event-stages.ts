import type { PublishedEvent } from '../domain/realtime/event-history.js'
import type { Connection } from '../domain/service/service.js'
import type { Delivery } from './channel.js'
import type { HookApp, HookContext, ServiceHandle } from './hook-context.js'

/**
 * Marks a hook whose work must also happen to events a live store publishes, which never pass through hooks
 * (set by `resolveResult` and `resolveExternal`, src/application/resolvers): the hook pipeline collects the marks of
 * a service's hooks, and ServiceEvents runs them on each of its store's events.
 */
export const EVENT_RESOLVER = Symbol.for('plumage.eventResolver')

export interface EventResolverMark {
  /** `result`: once per event, before it is published; `external`: once per delivery, for its recipients. */
  stage: 'result' | 'external'
  /** The event's data as the stage leaves it; `context.result` holds it too. */
  resolve(data: unknown, context: HookContext): Promise<unknown>
}

/** The resolvers a service's hooks carry, by stage. */
export interface EventResolvers {
  result: EventResolverMark[]
  external: EventResolverMark[]
}

/** Adds the event resolvers of the hooks in `hooks` (any nesting of arrays) to `into`, once each. */
export function collectEventResolvers(hooks: unknown, into: EventResolvers): void {
  for (const hook of [hooks].flat(2)) {
    const mark = (hook as { [EVENT_RESOLVER]?: EventResolverMark } | undefined)?.[EVENT_RESOLVER]
    if (mark && !into[mark.stage].includes(mark)) into[mark.stage].push(mark)
  }
}

const METHOD_OF_EVENT: Record<string, string> = {
  created: 'create',
  updated: 'update',
  patched: 'patch',
  removed: 'remove'
}

/**
 * The context event resolvers see: like an after hook's of the call that wrote the record, made on the server
 * (`params` empty) for the `result` stage, or with one recipient's provider, user and connection for `external`.
 */
export function eventContext(
  app: HookApp,
  entry: { readonly path: string; readonly handle: ServiceHandle },
  event: string,
  data: unknown,
  connection?: Connection
): HookContext {
  const params = connection
    ? { provider: connection.provider, connection, ...(connection.user ? { user: connection.user } : {}) }
    : {}
  return {
    app,
    service: entry.handle,
    path: entry.path,
    method: METHOD_OF_EVENT[event] ?? event,
    type: 'after',
    params,
    result: data,
    event,
    http: {}
  }
}

/** Runs resolvers one after the other on the data, each seeing what the one before left. */
export async function runResolvers(
  resolvers: readonly EventResolverMark[],
  data: unknown,
  context: () => HookContext
): Promise<unknown> {
  for (const resolver of resolvers) {
    const ctx = context()
    ctx.result = data
    data = await resolver.resolve(data, ctx)
  }
  return data
}

/**
 * A stage between an event's channels and its transports (AppExtension.deliver): one delivery in, the deliveries
 * to send instead out — split among recipients with their own payloads, or some recipients dropped.
 */
export type DeliveryStage = (delivery: Delivery, event: PublishedEvent) => Delivery[] | Promise<Delivery[]>
