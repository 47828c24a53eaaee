import { createMongoAbility, type MongoAbility, type RawRuleOf } from '@casl/ability'
import { permittedFieldsOf, rulesToCondition } from '@casl/ability/extra'
import type { Filter } from '../../domain/query/ast.js'
import { compileFilter, type Predicate } from '../../domain/query/compile-filter.js'
import { MATCH_ALL, and, conditionsToFilter, negate, or } from './conditions.js'
import { namesUser } from './rule-template.js'

import type { RuleAction } from '../../domain/rules.js'

export type { RuleAction }
export const RULE_ACTIONS: readonly string[] = ['manage', 'read', 'create', 'update', 'patch', 'remove']

export type Ability = MongoAbility<[string, string | Record<string, unknown>]>
export type RawRule = RawRuleOf<Ability>

type Record_ = Record<string, unknown>

/**
 * CASL matches conditions with plumage's reference evaluator (domain/query/compile-filter.ts), so that a record a
 * store finds through the rules' query is exactly one the rules allow when an event or a field is checked in memory.
 */
const conditionsMatcher = (conditions: unknown) => {
  const test = compileFilter(conditionsToFilter(conditions))
  return (record: Record_) => test(record)
}

/**
 * One user's rules after their values were filled in, compiled once and shared by every user with the same
 * rules (the key is the serialized rules): the query each action allows per service, its predicate, and the
 * fields each record shows.
 */
export class RuleSet {
  readonly ability: Ability
  private readonly filters = new Map<string, Filter | null>()
  private readonly predicates = new Map<string, Predicate>()
  private readonly fieldFree = new Map<string, boolean>()
  /**
   * The event being delivered (a token) and what these rules decided about it, once per event and rule set (see
   * EventRules.deliver).
   */
  eventToken?: object
  eventDecision?: unknown

  constructor(
    readonly key: string,
    rules: RawRule[],
    /** Each guarded service's fields (its schemas' properties): what a rule without `fields` grants. */
    private readonly schemaFields: (path: string) => readonly string[],
    /** Each guarded service's id field: kept in every record a user may read (it is how the record is named). */
    private readonly idField: (path: string) => string
  ) {
    this.ability = createMongoAbility<Ability>(rules, { conditionsMatcher } as never)
  }

  /**
   * The records of `path` that `action` may touch, as a filter in the query AST; null when none. Each `can`
   * rule is one branch of an or, bounded by the `cannot` rules above it (CASL's rulesToCondition). With `field`:
   * the records whose `field` the action may touch (rules granting other fields only, left out).
   */
  filter(action: RuleAction, path: string, field?: string): Filter | null {
    const key = `${action} ${path} ${field ?? ''}`
    if (this.filters.has(key)) return this.filters.get(key)!
    const filter = rulesToCondition(
      this.ability.rulesFor(action, path, field),
      (rule) => {
        const condition = conditionsToFilter(rule.conditions)
        return rule.inverted ? negate(condition) : condition
      },
      { and, or, empty: () => MATCH_ALL }
    )
    this.filters.set(key, filter)
    return filter
  }

  /** Whether `action` may touch this record (evaluated like the store evaluates the rules' query). */
  allows(action: RuleAction, path: string, record: unknown): boolean {
    const key = action === 'read' ? path : `${action} ${path}`
    let test = this.predicates.get(key)
    if (!test) {
      const filter = this.filter(action, path)
      test = filter ? compileFilter(filter) : () => false
      this.predicates.set(key, test)
    }
    return typeof record === 'object' && record !== null && test(record as Record_)
  }

  /** The fields among `fields` that `action` may not write on this record (a rule without fields grants any). */
  refusedFields(action: RuleAction, path: string, record: Record_, fields: readonly string[]): string[] {
    const subject = subjectOf(path, record)
    return fields.filter((field) => !this.ability.can(action, subject, field))
  }

  /** The fields of this record `action` may read: the schema's and the record's own, as the rules allow. */
  permittedFields(action: RuleAction, path: string, record: Record_): Set<string> {
    const all = [...this.schemaFields(path), ...Object.keys(record)]
    const fields = permittedFieldsOf(this.ability, action, subjectOf(path, record), {
      fieldsFrom: (rule) => rule.fields ?? all
    })
    return new Set(fields)
  }

  /** The record with only the fields this user may read and its id (the record itself when no rule limits fields). */
  project(path: string, record: unknown): unknown {
    if (typeof record !== 'object' || record === null || this.noFieldRules(path)) return record
    const allowed = this.permittedFields('read', path, record as Record_)
    allowed.add(this.idField(path))
    const projected: Record_ = {}
    for (const [field, value] of Object.entries(record)) if (allowed.has(field)) projected[field] = value
    return projected
  }

  /**
   * Fields readable in every record this user may read, hence safe to sort by: every `can read` rule grants the
   * field, and no `cannot read` rule names it. Conservative: a field granted only under conditions is not, as the
   * order of the records would reveal its values in records that hide it.
   */
  readableEverywhere(path: string, field: string): boolean {
    const top = field.split('.')[0]!
    if (top === this.idField(path)) return true
    for (const rule of this.ability.possibleRulesFor('read', path)) {
      if (!rule.fields) continue
      const named = rule.fields.includes(top) || rule.fields.includes(field)
      if (rule.inverted ? named : !named) return false
    }
    return true
  }

  /** A template's (rule-template.ts): whether fields shown of a record depend on who reads it. */
  projectsPerUser(path: string): boolean {
    return !this.noFieldRules(path) && this.ability.possibleRulesFor('read', path).some((r) => namesUser(r.conditions))
  }

  /** No rule of `path` restricts fields: projections are skipped. */
  private noFieldRules(path: string): boolean {
    let free = this.fieldFree.get(path)
    if (free === undefined) {
      free = this.ability.possibleRulesFor('read', path).every((rule) => !rule.fields)
      this.fieldFree.set(path, free)
    }
    return free
  }
}

/** A record tagged with its service, as CASL reads subjects. */
export function subjectOf(path: string, record: Record_): never {
  return Object.assign(Object.create(null) as object, record, { __caslSubjectType__: path }) as never
}
