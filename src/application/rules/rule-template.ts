import type { Filter } from '../../domain/query/ast.js'
import { compileFilter } from '../../domain/query/compile-filter.js'
import { fieldGetter } from '../../domain/query/field-getter.js'
import type { RawRule } from './rule-set.js'

/**
 * Where a user's id stood in their rules' conditions: users whose rules differ only there share one template, and
 * an event is decided once per template for all of them (ADR 0018, "Events").
 */
export const USER_ID = '\u0000plumage:user.id'

/**
 * The user ids a template's rules allow a record to (`values`, or every id but those when `except`): what a
 * condition on the user's id decides about one record, for every user at once.
 */
export interface UserIds {
  except: boolean
  values: Set<unknown>
}

const ALL: UserIds = { except: true, values: new Set() }
const NONE: UserIds = { except: false, values: new Set() }

/** Whether the user with this id is among them. */
export function includes(ids: UserIds, id: unknown): boolean {
  return ids.values.has(id) !== ids.except
}

/**
 * The rules with each condition value equal to the user's id replaced by USER_ID, and their key: two users get the
 * same key exactly when each one's rules are the template with their own id filled in.
 */
export function templateOf(rules: RawRule[], id: unknown): { key: string; rules: RawRule[] } {
  if (id === undefined || id === null || typeof id === 'object') return { key: JSON.stringify(rules), rules }
  const replace = (value: unknown): unknown =>
    value === id
      ? USER_ID
      : Array.isArray(value)
        ? value.map(replace)
        : typeof value === 'object' && value !== null
          ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replace(item)]))
          : value
  const templated = rules.map((rule) => (rule.conditions ? { ...rule, conditions: replace(rule.conditions) } : rule))
  return { key: JSON.stringify(templated), rules: templated as RawRule[] }
}

/** Whether a filter, or a rule's conditions, name the user's id anywhere. */
export function namesUser(value: unknown): boolean {
  if (value === USER_ID) return true
  if (typeof value !== 'object' || value === null) return false
  return Object.values(value).some(namesUser)
}

/** A filter that depends on the user's id in a way compileUserIds cannot solve: decide per user instead. */
export class UnsolvedFilter extends Error {}

/**
 * Compiles a template's filter into a function from a record to the user ids it matches for. Solved: equality,
 * inequality and membership on the user's id (`field: user.id`, `$ne`, `$in`, `$nin`, `$contains`), under any and/or;
 * parts that do not name the user are evaluated as the stores evaluate them (compileFilter). Anything else throws
 * UnsolvedFilter.
 */
export function compileUserIds(filter: Filter): (record: Record<string, unknown>) => UserIds {
  if (!namesUser(filter)) {
    const test = compileFilter(filter)
    return (record) => (test(record) ? ALL : NONE)
  }
  switch (filter.op) {
    case 'and':
    case 'or': {
      const parts = filter.filters.map(compileUserIds)
      const combine = filter.op === 'and' ? intersect : union
      return (record) => parts.reduce((ids, part) => combine(ids, part(record)), filter.op === 'and' ? ALL : NONE)
    }
    case 'eq':
    case 'ne':
    case 'in':
    case 'nin':
    case 'contains': {
      const get = fieldGetter(filter.field)
      const values = 'values' in filter ? filter.values : [filter.value]
      if (values.some((value) => value !== USER_ID && namesUser(value))) throw new UnsolvedFilter()
      // The other values of an $in / $nin, as the stores compare them; the user's id matches the record's value.
      const others = compileFilter({ op: 'in', field: filter.field, values: values.filter((v) => v !== USER_ID) })
      const negated = filter.op === 'ne' || filter.op === 'nin'
      return (record) => {
        const actual = get(record)
        const matches: UserIds =
          filter.op === 'contains'
            ? { except: false, values: new Set(Array.isArray(actual) ? actual : []) }
            : others(record)
              ? ALL
              : { except: false, values: actual == null ? new Set() : new Set([actual]) }
        return negated ? { except: !matches.except, values: matches.values } : matches
      }
    }
    default:
      throw new UnsolvedFilter()
  }
}

function intersect(a: UserIds, b: UserIds): UserIds {
  if (a.except && b.except) return { except: true, values: new Set([...a.values, ...b.values]) }
  if (a.except) return intersect(b, a)
  return { except: false, values: new Set([...a.values].filter((id) => includes(b, id))) }
}

function union(a: UserIds, b: UserIds): UserIds {
  if (!a.except && !b.except) return { except: false, values: new Set([...a.values, ...b.values]) }
  if (!a.except) return union(b, a)
  return { except: true, values: new Set([...a.values].filter((id) => !includes(b, id))) }
}
