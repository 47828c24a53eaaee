import { BadRequest } from '../../domain/errors/errors.js'
import type { Doc } from '../../domain/query/field-getter.js'
import { isPlainObject } from '../../domain/objects.js'
import type { Query } from '../../domain/service/service.js'
import type { App } from '../app.js'
import type { Rules } from '../rules/index.js'

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

/** What useRules leaves in the app's settings (`rules`): the rules, and a record before its caller's projection. */
interface AppRules {
  readonly rules: Rules
  /** The users service: its writes change the user of its connections (followUsers). */
  readonly users?: string
  original(data: unknown): unknown
}

export const rulesOf = (app: App) => app.settings.get('rules') as AppRules | undefined
