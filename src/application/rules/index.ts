import type { App } from '../app.js'
import type { Connection } from '../../domain/service/service.js'
import type { Doc } from '../../domain/query/field-getter.js'
import { compileFilter } from '../../domain/query/compile-filter.js'
import type { AppRules } from '../../domain/rules.js'
import { CallRules, readableFor } from './authorize.js'
import { EventRules } from './event-rules.js'
import { Rules, type RulesDefinition } from './rules.js'

export { RulesError } from './conditions.js'
import type { RuleSet } from './rule-set.js'

export type { RuleSet }
export { PROBE_USER, Rules, type RuleBuilder, type RulesDefinition, type RulesUser } from './rules.js'
export type { RuleAction } from './rule-set.js'

export interface RulesOptions {
  /** The service of the users rules are built for: its patched/updated events refresh their connections' rules. */
  users?: string
  /** The field of a user that identifies it (default 'id'). */
  idField?: string
}

const GUARDED_METHODS = ['find', 'get', 'create', 'update', 'patch', 'remove'] as const

/**
 * Gives the app its rules, once, after its services are registered: `useRules(app, { messages, users })`, one
 * definition per guarded service (src/services/<name>/<name>.rules.ts). From then on the rules apply to every
 * external call of those services (the query narrowed, records and data checked, results projected) and to every
 * event they publish (through the delivery stage). A bad rule throws a RulesError here, naming it.
 */
export function useRules(
  app: App,
  definitions: Readonly<Record<string, RulesDefinition>>,
  { users = 'users', idField = 'id' }: RulesOptions = {}
): Rules {
  // A service's fields: its records' (result schema) and those clients write (data and patch schemas: a password).
  const rules = new Rules(
    definitions,
    (path) => {
      if (!app.paths.includes(path)) return undefined
      const { result, data, patch } = app.schemasOf(path)?.schemas ?? {}
      return [...new Set([result, data, patch].flatMap((schema) => Object.keys(schema?.properties ?? {})))]
    },
    (path) => (app.service(path) as { id?: unknown }).id?.toString() ?? 'id',
    idField
  )
  const originals = new WeakMap<object, unknown>()
  const calls = new CallRules(rules, originals)
  const events = new EventRules(rules, originals)
  app.hooks({ around: { all: [calls.clientFields] } })
  // Appended per method, so they run after each service's own before hooks (`authenticate` first) and after hooks.
  const before = Object.fromEntries(
    GUARDED_METHODS.map((method) => [
      method,
      [method === 'find' || method === 'get' ? calls.authorizeRead : calls.authorizeWrite]
    ])
  )
  const after = Object.fromEntries(GUARDED_METHODS.map((method) => [method, [calls.project]]))
  for (const path of rules.paths) app.service(path).hooks({ before, after })
  app.extend({ deliver: (delivery, event) => events.deliver(delivery, event) })
  if (app.paths.includes(users)) followUsers(app, users, idField, events)
  // What other modules ask the rules (live queries), through the app's settings: they never import this module.
  const told: AppRules = {
    users,
    original: (data) => events.original(data),
    guards: (path) => rules.guards(path),
    reading: (user, path, query) => readingOf(rules.forCall(user), path, query)
  }
  app.settings.set('rules', told)
  return rules
}

/**
 * A user changed (role, anything the rules read) on any instance: the logged-in connections of that user get the
 * new record as `connection.user`, so their next events are delivered by the new rules. Users' events reach every
 * instance (live stores publish them from the shared log), so this holds everywhere within the log's delay.
 */
function followUsers(app: App, path: string, idField: string, events: EventRules): void {
  const connections = new Set<Connection>()
  app.on('login', (_result: unknown, meta?: { connection?: Connection }) => {
    if (meta?.connection) connections.add(meta.connection)
  })
  app.on('disconnect', (connection: Connection) => connections.delete(connection))
  const refresh = (data: unknown) => {
    const user = events.original(data) as Record<string, unknown> | undefined
    const id = user?.[idField]
    if (id === undefined || id === null) return
    for (const connection of connections) {
      if (connection.user && String(connection.user[idField]) === String(id)) connection.user = { ...user }
    }
  }
  app.service(path).on('patched', refresh)
  app.service(path).on('updated', refresh)
}

/** What a user with this rule set may read of `path` with `query` (AppRules.reading). */
function readingOf(set: RuleSet, path: string, query: unknown): ReturnType<AppRules['reading']> {
  const readable = readableFor(set, path, query)
  const allowed = readable ? compileFilter(readable) : () => false
  return { key: set.key, visible: (record) => (allowed(record) ? (set.project(path, record) as Doc) : undefined) }
}
