import type { ServiceCall } from '../../domain/service/service.js'

/**
 * What a transport plugs into a client (see client-app.ts). `call` resolves with the method's result
 * or rejects with a domain error (rebuilt with `errorFromJson`). A real-time transport also implements
 * `subscribe`: the core then forwards server events to service listeners and stops emitting local
 * events for its own calls (the server sends them); without it, own calls emit local events.
 */
export interface Transport {
  /** 'rest', 'socketio', … — lets plugins (e.g. authentication) adapt per transport. */
  readonly name: string
  /** The path as registered on the client: the transport fills its placeholders (`fillRoute`). */
  call(call: ServiceCall): Promise<unknown>
  /** Starts forwarding the server event `event` of service `path` to `emit`; returns the unsubscribe. */
  subscribe?(path: string, event: string, emit: (data: unknown) => void): () => void
}

/**
 * Read your writes: the event offset a transport read off a write's answer (the socket ack's third argument, the
 * REST `Plumage-Offset` header), by the params object of the call (what the client's fence waits for).
 */
export const writeOffsets = new WeakMap<object, string>()

/**
 * Fills `:placeholders` of a service path from `params.route` (`users/:userId/posts` →
 * `users/7/posts`). REST passes `encodeURIComponent` as `encode`; sockets send values as they are.
 */
export function fillRoute(
  path: string,
  route: Record<string, string> | undefined,
  encode: (value: string) => string = String
): string {
  if (!path.includes(':')) return path
  return path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment
      const value = route?.[segment.slice(1)]
      if (value === undefined)
        throw new Error(`params.route.${segment.slice(1)} is required for the service path '${path}'`)
      return encode(String(value))
    })
    .join('/')
}
