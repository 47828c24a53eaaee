/**
 * Marks a hook that needs a step when its service is set up: `App.setup` runs the step once per
 * service the hook is registered on, after the service's own `setup` and before the app is ready
 * (uniqueField's back-fill claims the keys of records written before the field was unique). A hook
 * registered on several methods carries one step: it runs once.
 */
export const HOOK_SETUP = Symbol.for('plumage.hookSetup')

/** The service a setup step prepares: its path and the object passed to `app.use` (its methods skip hooks). */
export interface SetupTarget {
  path: string
  service: object
}

export type HookSetup = (target: SetupTarget) => Promise<void>

/** Adds the setup steps of the hooks in `hooks` (any nesting of arrays) to `into`. */
export function collectSetupSteps(hooks: unknown, into: Set<HookSetup>): void {
  for (const hook of [hooks].flat(2)) {
    const step = (hook as { [HOOK_SETUP]?: HookSetup } | undefined)?.[HOOK_SETUP]
    if (step) into.add(step)
  }
}
