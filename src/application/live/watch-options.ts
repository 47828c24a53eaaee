import type { StoreQuery } from '../../domain/query/ast.js'
import { parseQuery } from '../../domain/query/parse-query.js'
import { BadRequest } from '../../domain/errors/errors.js'
import type { Doc } from '../../domain/query/field-getter.js'
import { isPlainObject } from '../../domain/objects.js'
import type { Connection, Query } from '../../domain/service/service.js'
import type { App } from '../app.js'
import type { AppRules } from '../../domain/rules.js'
import type { WindowChange } from '../../domain/query/live-window.js'
import type { LiveFrame } from './live-view.js'

/** One `watch` of a connection, as its transport hands it over. */
export interface WatchRequest {
  connection: Connection
  path: string
  query: unknown
  options: unknown
  /** The connection's `find` of `path` (an external call of the connection, not paginated). */
  find(query: Query): Promise<unknown>
  /** Sends a `live` frame to the connection (a progress frame, `{ offset }`, concerns all its watches). */
  send(frame: LiveFrame | { offset: string }): void
  /** Answers the `watch`: called once, at the moment the watch starts receiving frames. */
  answer(result: WatchAnswer): void
}

/** The answer to `watch`: the initial result, or (resuming) the changes from the client's list to it. */
export interface WatchAnswer {
  id: string
  offset?: string
  records?: Doc[]
  changes?: WindowChange[]
  /** Resuming was not possible (past the event history's window): `records` is a fresh result. */
  reset?: true
}

/** The query of a watch, checked as `find` would (an object), without what a live result cannot follow. */
export function rawQuery(query: unknown): Query {
  if (query === undefined || query === null) return {}
  if (!isPlainObject(query)) throw new BadRequest('The query of a live query must be an object')
  for (const key of ['$after', '$before', '$count'])
    if (query[key] !== undefined) throw new BadRequest(`A live query cannot use ${key}: it follows $skip and $limit`)
  return query as Query
}

/** `resume: { offset, records }` of a watch's options: the client's list and the last offset it applied. */
export function resumeOf(options: unknown): { offset: string; records: Doc[] } | undefined {
  const resume = isPlainObject(options) ? options.resume : undefined
  if (resume === undefined) return undefined
  if (!isPlainObject(resume) || !Array.isArray(resume.records) || !resume.records.every(isPlainObject))
    throw new BadRequest('resume must be { offset, records }: the last offset applied and the list of records')
  // Without an offset (the server records no events), the client gets a reset.
  return { offset: typeof resume.offset === 'string' ? resume.offset : '', records: resume.records as Doc[] }
}

/** The page size `find` would use: `$limit` within the service's `paginate` default and max. */
export function effectiveLimit(app: App, path: string, limit: number | undefined): number | undefined {
  const service = app.service(path) as { options?: { paginate?: false | { default?: number; max?: number } } }
  const paginate = service.options?.paginate
  if (!paginate) return limit
  const size = Math.min(limit ?? paginate.default ?? Infinity, paginate.max ?? Infinity)
  return Number.isFinite(size) ? size : undefined
}

/** The id field of the service at `path` ('id' unless it says otherwise). */
export const idFieldOf = (app: App, path: string) => (app.service(path) as { id?: unknown }).id?.toString() ?? 'id'

/** What the rules module tells live queries (AppRules), when it is loaded. */
export const rulesOf = (app: App) => app.settings.get('rules') as AppRules | undefined

/** A view's plan: where it is shared, and how it reads and sees records. */
export interface Plan {
  key: string
  query: StoreQuery
  visible: (record: Doc) => Doc | undefined
}

/** Where a watch of this connection is shared, what it reads, and what of a record it sees. */
export function planWatch(app: App, connection: Connection, path: string, raw: Query): Plan {
  const query = parseQuery(raw)
  const limit = effectiveLimit(app, path, query.limit)
  if (limit !== undefined) query.limit = limit
  const rules = rulesOf(app)
  if (!rules?.guards(path)) return { key: `${path}\n\n${JSON.stringify(query)}`, query, visible: (r) => r }
  const { key, visible } = rules.reading(connection.user, path, raw)
  return { key: `${path}\n${key}\n${JSON.stringify(query)}`, query, visible }
}
