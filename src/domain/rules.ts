import type { Doc } from './query/field-getter.js'

/**
 * The user rules are built for: `params.user` / `connection.user`; undefined when nobody is logged in. Its id and
 * role are typed for use in conditions; a condition on a value that is undefined is refused (it would match all).
 */
export type RulesUser =
  (Readonly<Record<string, unknown>> & { readonly id?: string | number; readonly role?: string }) | undefined

/** What rules grant: `read` covers find, get and events; `manage` every action. */
export type RuleAction = 'manage' | 'read' | 'create' | 'update' | 'patch' | 'remove'

type Conditions = Readonly<Record<string, unknown>>

/** CASL's vocabulary: `can(action, service, fields?, conditions?)` and `cannot(...)`; actions are RuleActions. */
export interface RuleBuilder {
  can(action: string | string[], service: string, conditions?: Conditions): unknown
  can(action: string | string[], service: string, fields: string | string[], conditions?: Conditions): unknown
  cannot(action: string | string[], service: string, conditions?: Conditions): unknown
  cannot(action: string | string[], service: string, fields: string | string[], conditions?: Conditions): unknown
}

/**
 * One service's rules (src/services/<name>/<name>.rules.ts): a function of the user, stating in CASL's words what
 * they may do and see. The rules module applies them (README "Rules"); the definitions import nothing but this type.
 */
export type RulesDefinition = (user: RulesUser, rules: RuleBuilder) => void

/**
 * What the rules module tells other modules through the app's settings (`app.settings.get('rules')`): live queries
 * read by it, so that a live result shows what the user's `find` would, without importing the rules module.
 */
export interface AppRules {
  /** The users service: its writes change the user of its connections. */
  readonly users?: string
  /** A record as it was before an event's recipient's projection. */
  original(data: unknown): unknown
  /** Whether rules guard this service. */
  guards(path: string): boolean
  /**
   * What a `find` of `query` on `path` by `user` may read: a key shared by every user with the same rules, and a
   * record as the user sees it (undefined when hidden). Throws the BadRequest `find` would (a forbidden `$sort`).
   */
  reading(user: RulesUser, path: string, query: unknown): { key: string; visible(record: Doc): Doc | undefined }
}
