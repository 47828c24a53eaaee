import type { PublishedEvent } from '../../domain/realtime/event-history.js'
import type { Connection } from '../../domain/service/service.js'
import type { Delivery } from '../channel.js'
import type { Doc } from '../../domain/query/field-getter.js'
import type { RuleSet } from './rule-set.js'
import { compileUserIds, includes, UnsolvedFilter, type UserIds } from './rule-template.js'
import type { Rules, RulesMember } from './rules.js'

/** What a rule set decided for a record it may not read. */
const HIDDEN = Symbol('hidden')

/** The events that carry a record of the service: the rules decide who sees it. Custom events pass as published. */
const RECORD_EVENTS = new Set(['created', 'updated', 'patched', 'removed'])

/**
 * What a template decided about one event: the user ids that may read the record and what they see of it (one
 * payload for all, or each user's own projection), or `undefined` ids when its rules must be asked user by user.
 */
interface Decision {
  ids?: UserIds
  payload: unknown
}
const PER_USER = Symbol('per user')

/**
 * The rules applied to events, as the app's delivery stage (AppExtension.deliver). Connections are grouped by the
 * template of their user's rules (rule-template.ts: users whose rules differ only in their own id share one), and
 * each template decides an event once for all its users: which ids may read the record (all of them, some, or all
 * but some: a condition on the user's id, solved against the record) and the payload, projected once. So the work
 * per event is one decision per template and a set lookup per connection, whether the rules name the user or not.
 * Rules a template cannot solve this way (a range on the user's id) are asked per distinct rule set. Connections
 * are gathered by payload: groups showing the same payload share one delivery, which the transport encodes once.
 */
export class EventRules {
  private readonly compiled = new WeakMap<RuleSet, Map<string, ((record: Doc) => UserIds) | null>>()

  constructor(
    private readonly rules: Rules,
    /** Records as they were before a call's result was projected for its caller. */
    private readonly originals: WeakMap<object, unknown>
  ) {}

  deliver(delivery: Delivery, _event?: PublishedEvent): Delivery[] {
    if (!this.rules.guards(delivery.path) || !RECORD_EVENTS.has(delivery.event)) return [delivery]
    const { path } = delivery
    const record = this.original(delivery.data)
    const event = {}
    const payloads = new Map<unknown, Connection[]>()
    for (const connection of delivery.connections) {
      const member = this.memberOf(connection)
      if (!member) continue
      const template = member.template
      if (template.eventToken !== event) {
        template.eventDecision = this.decide(template, path, record)
        template.eventToken = event
      }
      const { ids, payload } = template.eventDecision as Decision
      if (ids && !includes(ids, member.id)) continue
      const data = payload === PER_USER ? this.ownPayload(member, path, record, event) : payload
      if (data === HIDDEN) continue
      const shared = payloads.get(data)
      if (shared) shared.push(connection)
      else payloads.set(data, [connection])
    }
    return Array.from(payloads, ([data, connections]) => ({ ...delivery, data, connections }))
  }

  /** One template's decision on a record: solved for every user id at once where its rules allow. */
  private decide(template: RuleSet, path: string, record: unknown): Decision {
    if (typeof record !== 'object' || record === null)
      return { ids: { except: false, values: new Set() }, payload: HIDDEN }
    const solve = this.solver(template, path)
    if (!solve) return { payload: PER_USER }
    const ids = solve(record as Doc)
    const nobody = !ids.except && ids.values.size === 0
    return {
      ids,
      payload: nobody ? HIDDEN : template.projectsPerUser(path) ? PER_USER : template.project(path, record)
    }
  }

  private solver(template: RuleSet, path: string): ((record: Doc) => UserIds) | null {
    let byPath = this.compiled.get(template)
    if (!byPath) this.compiled.set(template, (byPath = new Map()))
    if (!byPath.has(path)) {
      let solve: ((record: Doc) => UserIds) | null
      try {
        solve = compileUserIds(template.filter('read', path) ?? { op: 'or', filters: [] })
      } catch (error) {
        if (!(error instanceof UnsolvedFilter)) throw error
        solve = null
      }
      byPath.set(path, solve)
    }
    return byPath.get(path)!
  }

  /** The record before its caller's projection (a call's event carries what the caller received). */
  original(data: unknown): unknown {
    return typeof data === 'object' && data !== null ? (this.originals.get(data) ?? data) : data
  }

  /** A connection's template and id; none (it receives nothing) when its user's rules fail validation. */
  private memberOf(connection: Connection): RulesMember | undefined {
    try {
      return this.rules.memberOf(connection.user)
    } catch {
      return undefined
    }
  }

  /**
   * What a user's own rule set shows of the record, for what their template cannot decide for all its users at once:
   * decided once per event and rule set, so users with the same rules share the payload.
   */
  private ownPayload(member: RulesMember, path: string, record: unknown, event: object): unknown {
    let set: RuleSet
    try {
      set = this.rules.for(member.user)
    } catch {
      return HIDDEN
    }
    if (set.eventToken !== event) {
      set.eventDecision = set.allows('read', path, record) ? set.project(path, record) : HIDDEN
      set.eventToken = event
    }
    return set.eventDecision
  }
}
