import type { HookContext } from '../hook-context.js'

/** A request path resolved to a service. */
export interface Target {
  /** The service's registered path (e.g. `users/:userId/posts`). */
  readonly path: string
  /** The methods external callers may use. */
  readonly methods: readonly string[]
  /** Values of the path's `:placeholders`, still percent-encoded as they arrived. */
  readonly route: Record<string, string>
  /** A trailing id segment (only when resolved with `{ id: true }`), as it arrived. */
  readonly id?: string
}

/** What a call answers: the result for the caller (a `protect`ed copy when hooks made one), and HTTP hints. */
export interface CallResult {
  result: unknown
  /** Set by a hook through `context.http.status`. */
  status?: number
  /** Set by a hook through `context.http.location`: answer with a redirect. */
  location?: string
  /** Read your writes: the write's event offset, when it asked for it (`context.http.offset`). */
  offset?: () => Promise<string | undefined>
}

/** What a call answers, read off its context once the hooks ran. */
export function callResult(context: HookContext): CallResult {
  const { status, location, offset } = context.http
  return { result: context.dispatch ?? context.result, status, location, offset }
}
