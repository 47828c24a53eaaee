/**
 * Marks a hook that hides fields from external callers (set by `protect`). The app also strips
 * these fields from events a store publishes by itself, which never pass through hooks.
 */
export const PROTECTED_FIELDS = Symbol.for('plumage.protectedFields')

export function withoutFields(value: unknown, fields: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutFields(item, fields))
  if (typeof value !== 'object' || value === null) return value
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(value)) if (!fields.has(key)) copy[key] = (value as Record<string, unknown>)[key]
  return copy
}
