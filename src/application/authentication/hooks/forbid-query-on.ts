import { BadRequest } from '../../../domain/errors/errors.js'
import type { Hook, HookContext } from '../../hook-context.js'

/**
 * Before hook: external queries may not filter or sort by `fields`. `protect` hides a password hash
 * from results, but `?password[$gt]=$2b$10$M…` or `$sort[password]=1` would still reveal it one
 * comparison at a time. `$select` of the field stays harmless (protect strips it).
 */
export function forbidQueryOn(...fields: string[]): Hook {
  const forbidden = new Set(fields)
  const find = (value: unknown): string | undefined => {
    if (Array.isArray(value)) {
      for (const item of value) {
        const found = find(item)
        if (found) return found
      }
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, nested] of Object.entries(value)) {
        if (forbidden.has(key)) return key
        const found = key === '$select' ? undefined : find(nested)
        if (found) return found
      }
    }
    return undefined
  }
  return (context: HookContext) => {
    if (context.params.provider === undefined) return
    const field = find(context.params.query)
    if (field) throw new BadRequest(`Querying by '${field}' is not allowed`)
  }
}
