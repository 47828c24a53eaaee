import type { PublishedEvent } from '../../domain/realtime/event-history.js'
import type { Connection } from '../../domain/service/service.js'
import type { Delivery } from '../channel.js'
import type { RuleSet } from './rule-set.js'
import type { Rules } from './rules.js'

/** What a rule set decided for a record it may not read. */
const HIDDEN = Symbol('hidden')

/** The events that carry a record of the service: the rules decide who sees it. Custom events pass as published. */
const RECORD_EVENTS = new Set(['created', 'updated', 'patched', 'removed'])

/**
 * The rules applied to events, as the app's delivery stage (AppExtension.deliver): the connections of one delivery
 * are grouped by their rule set (users whose rules are the same once their values are filled in share one), and
 * each group whose rules allow the record gets its payload projected once for the whole group; groups with the same
 * payload share one delivery (the transport encodes each delivery once). Per event: one pass over the connections
 * to group them, then work per group, not per connection.
 */
export class EventRules {
  constructor(
    private readonly rules: Rules,
    /** Records as they were before a call's result was projected for its caller. */
    private readonly originals: WeakMap<object, unknown>
  ) {}

  deliver(delivery: Delivery, _event?: PublishedEvent): Delivery[] {
    if (!this.rules.guards(delivery.path) || !RECORD_EVENTS.has(delivery.event)) return [delivery]
    const { path } = delivery
    const record = this.original(delivery.data)
    // One pass over the connections: each rule set decides (and projects) once per event, remembered on it under
    // this event's token; connections are gathered by payload, so groups showing the same payload share a delivery.
    const event = {}
    const payloads = new Map<unknown, Connection[]>()
    for (const connection of delivery.connections) {
      const set = this.ruleSetOf(connection)
      if (!set) continue
      if (set.eventToken !== event) {
        set.eventPayload = set.allows('read', path, record) ? set.project(path, record) : HIDDEN
        set.eventToken = event
      }
      const payload = set.eventPayload
      if (payload === HIDDEN) continue
      const shared = payloads.get(payload)
      if (shared) shared.push(connection)
      else payloads.set(payload, [connection])
    }
    return Array.from(payloads, ([data, connections]) => ({ ...delivery, data, connections }))
  }

  /** The record before its caller's projection (a call's event carries what the caller received). */
  original(data: unknown): unknown {
    return typeof data === 'object' && data !== null ? (this.originals.get(data) ?? data) : data
  }

  /** A connection's rule set; none (it receives nothing) when its user's rules fail validation. */
  private ruleSetOf(connection: Connection): RuleSet | undefined {
    try {
      return this.rules.for(connection.user)
    } catch {
      return undefined
    }
  }
}
