import { AbilityBuilder, createMongoAbility } from '@casl/ability'
import { GeneralError } from '../../domain/errors/errors.js'
import { conditionsToFilter, fieldsOf, negate, RulesError } from './conditions.js'
import { RULE_ACTIONS, RuleSet, type Ability, type RawRule } from './rule-set.js'
import { templateOf } from './rule-template.js'
import type { RuleBuilder, RulesDefinition, RulesUser } from '../../domain/rules.js'

export type { RuleBuilder, RulesDefinition, RulesUser }

/** A user the definitions are tried with at setup, besides nobody: every rule that depends on a user shows. */
export const PROBE_USER: Readonly<Record<string, unknown>> = Object.freeze({ id: 0, role: 'probe' })

/** At most this many distinct rule sets are kept compiled (then the cache starts over). */
const MAX_RULE_SETS = 10_000

/**
 * A user as events see them: the template their rules share with every user whose rules differ only in their id
 * (rule-template.ts), and their id in it.
 */
export interface RulesMember {
  readonly template: RuleSet
  readonly id: unknown
  readonly user: RulesUser
}

/**
 * The app's rules: the definitions of the guarded services, the rule set each user gets (built once per user
 * object, compiled once per distinct set of rules) and their validation. A definition that names an unknown
 * service, action or field, or an operator the query AST does not support, throws a RulesError: at setup (tried
 * with nobody and PROBE_USER) and whenever a user's rules are built.
 */
export class Rules {
  private readonly byKey = new Map<string, RuleSet>()
  private readonly byUser = new PerUser<RuleSet>()
  private anonymous?: RuleSet
  private readonly templates = new Map<string, RuleSet>()
  private readonly members = new PerUser<RulesMember>()
  private anonymousMember?: RulesMember

  constructor(
    private readonly definitions: Readonly<Record<string, RulesDefinition>>,
    /** Each guarded service's fields (its schemas' properties); undefined for a service the app does not have. */
    private readonly schemaFields: (path: string) => readonly string[] | undefined,
    /** Each guarded service's id field (default 'id'). */
    private readonly idField: (path: string) => string = () => 'id',
    /** The field of a user that identifies it. */
    private readonly userIdField = 'id'
  ) {
    for (const path of Object.keys(definitions)) {
      if (!schemaFields(path)) throw new RulesError(`Rules name an unknown service '${path}'`)
    }
    this.for(undefined)
    this.for(PROBE_USER)
  }

  /** The services whose calls and events rules guard. */
  get paths(): string[] {
    return Object.keys(this.definitions)
  }

  guards(path: string): boolean {
    return Object.hasOwn(this.definitions, path)
  }

  /** The rule set of this user (cached per user id while its fields stay the same, PerUser). */
  for(user: RulesUser): RuleSet {
    if (!user) return (this.anonymous ??= this.build(undefined))
    return this.byUser.get(user, user[this.userIdField], () => this.build(user))
  }

  /** Like `for`, but a rule set that fails validation is a 500 naming the rule, for a call that needs it. */
  forCall(user: RulesUser): RuleSet {
    try {
      return this.for(user)
    } catch (error) {
      if (error instanceof RulesError) throw new GeneralError(error.message)
      throw error
    }
  }

  /** This user's template and id (cached as `for` caches); throws a RulesError as `for` does. */
  memberOf(user: RulesUser): RulesMember {
    if (!user) return (this.anonymousMember ??= this.member(undefined))
    return this.members.get(user, user[this.userIdField], () => this.member(user))
  }

  private member(user: RulesUser): RulesMember {
    const id = user?.[this.userIdField]
    const { key, rules } = templateOf(this.rulesOf(user), id)
    return { template: this.compiled(this.templates, key, rules), id, user }
  }

  private build(user: RulesUser): RuleSet {
    const rules = this.rulesOf(user)
    return this.compiled(this.byKey, JSON.stringify(rules), rules)
  }

  private rulesOf(user: RulesUser): RawRule[] {
    const builder = new AbilityBuilder<Ability>(createMongoAbility)
    for (const define of Object.values(this.definitions)) define(user, builder as RuleBuilder)
    return builder.rules as RawRule[]
  }

  /** The rule set under `key` in `cache`, validated and compiled the first time. */
  private compiled(cache: Map<string, RuleSet>, key: string, rules: RawRule[]): RuleSet {
    let set = cache.get(key)
    if (!set) {
      for (const rule of rules) this.validate(rule)
      if (cache.size >= MAX_RULE_SETS) cache.clear()
      set = new RuleSet(key, rules, (path) => this.schemaFields(path) ?? [], this.idField)
      cache.set(key, set)
    }
    return set
  }

  /** One line naming what is wrong with a rule. */
  private validate(rule: RawRule): void {
    const actions = [rule.action].flat()
    const subjects = [rule.subject ?? []].flat() as string[]
    for (const action of actions) {
      if (!RULE_ACTIONS.includes(action)) throw new RulesError(`A rule names an unknown action '${action}'`)
    }
    for (const path of subjects) {
      const known = path === 'all' ? [] : this.guards(path) ? this.schemaFields(path) : undefined
      if (!known)
        throw new RulesError(`A rule names an unknown service '${path}' (rules guard: ${this.paths.join(', ')})`)
      const named = [...[rule.fields ?? []].flat()]
      if (rule.conditions !== undefined) named.push(...conditionFields(path, rule))
      for (const field of named) {
        const top = String(field).split('.')[0]!
        if (path === 'all' || !known.includes(top))
          throw new RulesError(`A rule of '${path}' names the field '${field}', which its schemas do not have`)
      }
    }
  }
}

/** Built per user, cached by id: a hit for a user with the same fields (the JWT strategy's copy per call). */
class PerUser<T> {
  private readonly byId = new Map<unknown, { fields: Record<string, unknown>; value: T }>()

  get(user: Record<string, unknown>, id: unknown, build: () => T): T {
    const entry = this.byId.get(id)
    if (entry && sameFields(entry.fields, user)) return entry.value
    if (this.byId.size >= MAX_RULE_SETS) this.byId.clear()
    const value = build()
    this.byId.set(id, { fields: { ...user }, value }) // a snapshot: a user changed in place misses
    return value
  }
}

function sameFields(snapshot: Record<string, unknown>, user: Record<string, unknown>): boolean {
  const keys = Object.keys(snapshot)
  if (keys.length !== Object.keys(user).length) return false
  for (const key of keys) if (!Object.is(snapshot[key], user[key]) || !Object.hasOwn(user, key)) return false
  return true
}

/** The fields a rule's conditions name; a condition the query AST cannot express is a RulesError naming the service. */
function conditionFields(path: string, rule: RawRule): string[] {
  try {
    const condition = conditionsToFilter(rule.conditions)
    if (rule.inverted) negate(condition)
    return [...fieldsOf(condition)]
  } catch (error) {
    if (error instanceof RulesError) throw new RulesError(`A rule of '${path}' ${error.message}`)
    throw error
  }
}
