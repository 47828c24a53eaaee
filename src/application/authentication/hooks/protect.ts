import type { Hook, HookContext } from '../../hook-context.js'
import { PROTECTED_FIELDS, withoutFields } from '../../protected-fields.js'

/**
 * After hook: removes `fields` from what leaves the server — single records, arrays, find pages,
 * whatever `$select` asked for — by setting `context.dispatch`, which transports send and events
 * carry. For external calls `context.result` is replaced too; internal callers keep the fields.
 * The hook is marked with PROTECTED_FIELDS so the app also strips store-published events.
 */
export function protect(...fields: string[]): Hook {
  const hidden = new Set(fields)
  const hook = (context: HookContext) => {
    const source = context.dispatch ?? context.result
    if (typeof source !== 'object' || source === null) return
    const page = source as { data?: unknown }
    context.dispatch =
      context.method === 'find' && !Array.isArray(source) && Array.isArray(page.data)
        ? { ...source, data: withoutFields(page.data, hidden) }
        : withoutFields(source, hidden)
    if (context.params.provider !== undefined) context.result = context.dispatch
  }
  return Object.assign(hook, { [PROTECTED_FIELDS]: fields })
}
