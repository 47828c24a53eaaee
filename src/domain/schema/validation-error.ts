import { BadRequest, type FeathersError } from '../errors/errors.js'
import type { SchemaIssue } from './json-schema.js'

/**
 * The 400 for failed schema rules, in Feathers' error shape: `message` names every failing field and
 * rule in one sentence, `errors` maps each field to its message (what forms show next to a field),
 * and `data` lists the issues `{ field, rule, message }` in order.
 */
export function validationError(subject: 'data' | 'query', issues: readonly SchemaIssue[]): FeathersError {
  const errors: Record<string, string> = {}
  for (const issue of issues) errors[issue.field] ??= issue.message
  const error = new BadRequest(`Invalid ${subject}: ${issues.map((issue) => issue.message).join('; ')}`, { errors })
  Object.defineProperty(error, 'data', { value: issues.map((issue) => ({ ...issue })), enumerable: true })
  return error
}

/** `'email'` for a field, `the data` for the value itself (a path of '' ). */
export function describeField(field: string): string {
  return field === '' ? 'the data' : `'${field}'`
}
