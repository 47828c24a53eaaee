import { BadRequest, Forbidden } from '../../domain/errors/errors.js'
import type { Filter } from '../../domain/query/ast.js'
import { asList } from '../../domain/query/parse-query.js'
import type { AroundHook, Hook, HookContext } from '../hook-context.js'
import { declareStatuses } from '../hook-statuses.js'
import { and, filterToQuery } from './conditions.js'
import type { RuleAction, RuleSet } from './rule-set.js'
import type { Rules } from './rules.js'

type Record_ = Record<string, unknown>

/** Keys of a query that page, project or walk a cursor: not criteria, and meaningless to a write's record check. */
const NOT_CRITERIA = new Set(['$limit', '$skip', '$sort', '$select', '$after', '$before', '$count'])
const NOTHING: Filter = { op: 'or', filters: [] }

/**
 * The hooks that apply rules to external calls (`params.provider` set; internal calls are trusted, as in
 * Feathers). `clientFields` remembers which fields the client sent before the service's hooks add their own
 * (the author, timestamps); `authorize` runs after the service's before hooks (so after `authenticate`) and
 * narrows the query, checks the record and the data; `project` runs after the service's after hooks and leaves
 * out the fields the caller may not read, keeping the whole record for the call's event (`originals`).
 */
export class CallRules {
  private readonly sent = new WeakMap<HookContext, string[][]>()

  constructor(
    private readonly rules: Rules,
    /** What each projected record was before projection: events are checked and projected from it. */
    readonly originals: WeakMap<object, unknown>
  ) {}

  /** App-level around hook: the fields of each item of the client's data, before any hook adds some. */
  readonly clientFields: AroundHook = (context, next) => {
    if (context.params.provider !== undefined && typeof context.data === 'object' && context.data !== null) {
      const items = Array.isArray(context.data) ? context.data : [context.data]
      this.sent.set(
        context,
        items.map((item) => (typeof item === 'object' && item !== null ? Object.keys(item) : []))
      )
    }
    return next()
  }

  /** Before find and get: the query narrowed to what the rules let the caller read (no promise: nothing to await). */
  readonly authorizeRead: Hook = (context: HookContext) => {
    if (context.params.provider === undefined) return
    narrow(context, readableFor(this.rules.forCall(context.params.user), context.path, context.params.query))
  }

  /** Before create, update, patch and remove; declares its 403 for the OpenAPI document. */
  readonly authorizeWrite: Hook = declareStatuses((context: HookContext) => this.authorize(context), 403)

  private async authorize(context: HookContext): Promise<void> {
    if (context.params.provider === undefined) return
    const set = this.rules.forCall(context.params.user)
    const { path, method } = context
    if (method === 'create') return this.checkCreate(context, set)
    const readable = readableFor(set, path, context.params.query)
    const action = method as RuleAction
    const allowed = both(readable, set.filter(action, path))
    if (context.id === null || context.id === undefined) {
      narrow(context, allowed)
      if (action === 'patch') await this.checkEach(context, set)
      return
    }
    // The record must be readable (else the same 404 a missing id gets), then open to this action (else 403).
    const record = (await context.service.get!(context.id, {
      query: withRules(criteriaOf(context.params.query), readable)
    })) as Record_
    if (!set.allows(action, path, record))
      throw new Forbidden(`You are not allowed to ${method} this record of '${path}'`)
    if (action !== 'remove') this.checkFields(context, set, action, record, 0)
    narrow(context, allowed)
  }

  readonly project: Hook = (context: HookContext) => {
    if (context.params.provider === undefined) return
    const set = this.rules.forCall(context.params.user)
    const source = context.dispatch ?? context.result
    if (typeof source !== 'object' || source === null) return
    const one = (record: unknown) => {
      const projected = set.project(context.path, record)
      if (projected !== record && typeof projected === 'object' && projected !== null)
        this.originals.set(projected, record)
      return projected
    }
    const page = source as { data?: unknown }
    const projected = Array.isArray(source)
      ? source.map(one)
      : context.method === 'find' && Array.isArray(page.data)
        ? { ...source, data: page.data.map(one) }
        : one(source)
    context.dispatch = projected
    context.result = projected
  }

  /** Each new record must be one the rules let this user create, with fields they may set. */
  private checkCreate(context: HookContext, set: RuleSet): void {
    const items = (Array.isArray(context.data) ? context.data : [context.data]) as Record_[]
    items.forEach((item, index) => {
      if (!set.allows('create', context.path, item))
        throw new Forbidden(`You are not allowed to create this record in '${context.path}'`)
      this.checkFields(context, set, 'create', item, index)
    })
  }

  /** A multi-record patch: the sent fields must be open on every record it would change. */
  private async checkEach(context: HookContext, set: RuleSet): Promise<void> {
    const records = (await context.service.find!({
      query: criteriaOf(context.params.query),
      paginate: false
    })) as Record_[]
    for (const record of records) this.checkFields(context, set, 'patch', record, 0)
  }

  /** 403 naming the fields the client sent that this action may not set on this record (never their values). */
  private checkFields(context: HookContext, set: RuleSet, action: RuleAction, record: Record_, index: number): void {
    const sent = this.sent.get(context)?.[index] ?? []
    if (sent.length === 0) return
    const refused = set.refusedFields(action, context.path, record, sent)
    if (refused.length > 0)
      throw new Forbidden(`You may not set ${refused.map((field) => `'${field}'`).join(', ')} in '${context.path}'`)
  }
}

/** Both filters; null (nothing) when either is. Made once per pair (a rule set keeps its filters). */
function both(first: Filter | null, second: Filter | null): Filter | null {
  if (!first || !second) return null
  const pairs = joined.get(first) ?? joined.set(first, new WeakMap()).get(first)!
  return pairs.get(second) ?? pairs.set(second, and([first, second])).get(second)!
}
const joined = new WeakMap<Filter, WeakMap<Filter, Filter>>()

/** The call's query ANDed with what the rules allow, so the store filters (with its indexes) and nothing else. */
function narrow(context: HookContext, allowed: Filter | null): void {
  context.params = { ...context.params, query: withRules(context.params.query, allowed) }
}

/** The query of each filter, made once: a rule set keeps its filters, so most calls find theirs here. */
const asQuery = new WeakMap<Filter, Record_>()

function withRules(query: Record_ | undefined, allowed: Filter | null): Record_ {
  const { $and, ...rest } = query ?? {}
  const filter = allowed ?? NOTHING
  const rules = asQuery.get(filter) ?? asQuery.set(filter, filterToQuery(filter)).get(filter)!
  return { ...rest, $and: $and === undefined ? [rules] : [rules, { $and }] }
}

function criteriaOf(query: Record_ | undefined): Record_ {
  const criteria: Record_ = {}
  for (const [key, value] of Object.entries(query ?? {})) if (!NOT_CRITERIA.has(key)) criteria[key] = value
  return criteria
}

/**
 * The records this query may match: those the user reads, and among them those where the user reads every field
 * the query compares (a comparison on a hidden field would reveal its value one guess at a time; forbidQueryOn
 * refuses it for passwords). Sorting needs a field readable in every record (400 otherwise). `$select` stays
 * free: projection leaves hidden fields out anyway.
 */
export function readableFor(set: RuleSet, path: string, query: unknown): Filter | null {
  const compared = new Set<string>()
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk)
    if (typeof value !== 'object' || value === null) return
    for (const [key, nested] of Object.entries(value)) {
      if (key === '$or' || key === '$and') walk(asList(nested) ?? nested)
      else if (key === '$sort' && typeof nested === 'object' && nested !== null) {
        for (const field of Object.keys(nested))
          if (!set.readableEverywhere(path, field)) throw new BadRequest(`Sorting by '${field}' is not allowed`)
      } else if (!key.startsWith('$')) compared.add(key)
    }
  }
  walk(query)
  let readable = set.filter('read', path)
  for (const field of compared) {
    if (set.readableEverywhere(path, field)) continue
    readable = both(readable, set.filter('read', path, field.split('.')[0]!))
  }
  return readable
}
