/**
 * Marks a hook with the error statuses it may answer beyond the method's own, so the API documents list
 * them on the operations the hook runs on and nowhere else (restrictToOwner: 403). A hook of the app's own
 * declares its statuses the same way: `declareStatuses(myHook, 402)`.
 */
export const HOOK_STATUSES = Symbol.for('plumage.hookStatuses')

/** Returns `hook`, marked as answering `statuses` (added to any it declared before). */
export function declareStatuses<H extends object>(hook: H, ...statuses: number[]): H {
  const declared = (hook as { [HOOK_STATUSES]?: readonly number[] })[HOOK_STATUSES] ?? []
  return Object.assign(hook, { [HOOK_STATUSES]: [...declared, ...statuses] })
}

/** The statuses the hooks in `hooks` declare, each once, in ascending order. */
export function declaredStatuses(hooks: readonly object[]): number[] {
  const statuses = new Set<number>()
  for (const hook of hooks)
    for (const status of (hook as { [HOOK_STATUSES]?: number[] })[HOOK_STATUSES] ?? []) statuses.add(status)
  return [...statuses].sort((a, b) => a - b)
}
