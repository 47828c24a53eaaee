import type { Doc } from './field-getter.js'

/** `$select`: keeps the listed fields and always the id. */
export function project<T extends Doc>(record: T, select: readonly string[] | undefined, idField: string): T {
  if (!select) return record
  const result: Doc = {}
  if (Object.hasOwn(record, idField)) result[idField] = record[idField]
  for (const field of select) if (Object.hasOwn(record, field)) result[field] = record[field]
  return result as T
}
