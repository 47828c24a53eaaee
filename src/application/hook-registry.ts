import type { AroundHook, Hook, HookMap } from './hook-context.js'

export interface HookChain {
  around: AroundHook[]
  before: Hook[]
  after: Hook[]
  error: Hook[]
}

const TYPES = ['around', 'before', 'after', 'error'] as const

/** Hooks registered on one level (the app, or one service), resolved per method. */
export class HookRegistry {
  private readonly registered: { [K in keyof HookChain]: Map<string, HookChain[K]> } = {
    around: new Map(),
    before: new Map(),
    after: new Map(),
    error: new Map()
  }

  add(map: HookMap | AroundHook[]): void {
    const normalised: HookMap = Array.isArray(map) ? { around: { all: map } } : map
    for (const type of TYPES) {
      for (const [method, hooks] of Object.entries(normalised[type] ?? {})) {
        const list = Array.isArray(hooks) ? hooks : hooks ? [hooks] : []
        const target = this.registered[type] as Map<string, unknown[]>
        target.set(method, [...(target.get(method) ?? []), ...list])
      }
    }
  }

  /** `all` hooks first, then the method's own, as Feathers runs them. */
  forMethod(method: string): HookChain {
    const pick = <K extends keyof HookChain>(type: K): HookChain[K] =>
      [...(this.registered[type].get('all') ?? []), ...(this.registered[type].get(method) ?? [])] as HookChain[K]
    return { around: pick('around'), before: pick('before'), after: pick('after'), error: pick('error') }
  }
}

/** App hooks wrap service hooks: app before runs first, app after runs last. */
export function combineChains(app: HookChain, service: HookChain): HookChain {
  return {
    around: [...app.around, ...service.around],
    before: [...app.before, ...service.before],
    after: [...service.after, ...app.after],
    error: [...service.error, ...app.error]
  }
}
