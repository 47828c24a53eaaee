/**
 * `$select`: keeps the listed fields (literal names, own properties only) and always the id.
 * The one definition of projection for every adapter: the memory adapter projects with it, and so
 * does the RethinkDB adapter for the records its writes return whole (`returnChanges`).
 */
export function project<T extends Record<string, unknown>>(
  record: T,
  select: readonly string[] | undefined,
  idField: string
): T {
  if (!select) return record
  const result: Record<string, unknown> = {}
  if (Object.hasOwn(record, idField)) result[idField] = record[idField]
  for (const field of select) if (Object.hasOwn(record, field)) result[field] = record[field]
  return result as T
}
