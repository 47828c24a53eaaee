import type { IncomingHttpHeaders } from 'node:http'
import type { Gateway } from '../../application/transport/index.js'
import { isServerError } from '../../domain/tracing.js'

/** The older events, which are calls of the authentication service. */
const AUTHENTICATION_EVENTS: Record<string, string> = { authenticate: 'create', logout: 'remove' }

/**
 * Runs one socket call in a server span `<path> <method>` (e.g. `messages create`) with
 * `rpc.system.name` socket.io and `rpc.method` `<path>/<method>`; failed when the call fails with a
 * server error (a 4xx is the caller's). A call that names no service or method of it is `_OTHER`,
 * so that what clients send cannot multiply span names. Every call starts a trace of its own: a
 * connection outlives many operations, so a `traceparent` of its handshake would lump them together,
 * and Feathers clients send no per-call headers. Tracing off, the call just runs.
 */
export function tracedCall(
  gateway: Gateway,
  event: unknown,
  path: unknown,
  call: () => Promise<unknown>
): Promise<unknown> {
  const { tracer } = gateway
  if (!tracer.enabled) return call()
  const [service, method] =
    typeof event === 'string' && Object.hasOwn(AUTHENTICATION_EVENTS, event)
      ? ['authentication', AUTHENTICATION_EVENTS[event]!]
      : resolved(gateway, event, path)
  const name = service === undefined ? '_OTHER' : `${service} ${method}`
  return tracer.run(
    name,
    {
      kind: 'server',
      parent: null,
      isError: isServerError,
      attributes: {
        'rpc.system.name': 'socket.io',
        'rpc.method': service === undefined ? '_OTHER' : `${service}/${method}`
      }
    },
    call
  )
}

function resolved(gateway: Gateway, event: unknown, path: unknown): [string, string] | [undefined, undefined] {
  const target = typeof path === 'string' ? gateway.resolve(path) : undefined
  return target && typeof event === 'string' && target.methods.includes(event)
    ? [target.path, event]
    : [undefined, undefined]
}

/**
 * Runs a connection's handshake (its login, when it brought an `Authorization` header) in a server
 * span `socket.io connect`: one request, so a `traceparent` header of the handshake is its parent.
 */
export function tracedHandshake(
  gateway: Gateway,
  headers: IncomingHttpHeaders,
  handshake: () => Promise<void>
): Promise<void> {
  const { tracer } = gateway
  if (!tracer.enabled) return handshake()
  const traceparent = headers.traceparent
  return tracer.run(
    'socket.io connect',
    {
      kind: 'server',
      parent: typeof traceparent === 'string' ? traceparent : null,
      isError: isServerError,
      attributes: { 'rpc.system.name': 'socket.io', 'rpc.method': 'connect' }
    },
    handshake
  )
}
