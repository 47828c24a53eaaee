import { isServerError, type Tracer } from '../../domain/tracing.js'
import type { RealtimeExtension } from '../realtime/realtime-transport.js'

/**
 * Tracing's part in a real-time transport: each call runs in a server span `<path> <method>` (e.g.
 * `messages create`) with `rpc.system.name` socket.io and `rpc.method` `<path>/<method>`, failed when the call
 * fails with a server error (a 4xx is the caller's). A call that names no service or method of it is `_OTHER`,
 * so that what clients send cannot multiply span names. Every call starts a trace of its own: a connection
 * outlives many operations, so a `traceparent` of its handshake would lump them together, and Feathers clients
 * send no per-call headers. The handshake (its login, when it brought an `Authorization` header) is a server
 * span `socket.io connect`: one request, so a `traceparent` header of the handshake is its parent.
 */
export function realtimeTracing(tracer: Tracer): RealtimeExtension {
  return {
    aroundCall: (target, next) =>
      tracer.run(
        target === undefined ? '_OTHER' : `${target.path} ${target.method}`,
        {
          kind: 'server',
          parent: null,
          isError: isServerError,
          attributes: {
            'rpc.system.name': 'socket.io',
            'rpc.method': target === undefined ? '_OTHER' : `${target.path}/${target.method}`
          }
        },
        next
      ),
    aroundHandshake: (headers, next) => {
      const traceparent = headers.traceparent
      return tracer.run(
        'socket.io connect',
        {
          kind: 'server',
          parent: typeof traceparent === 'string' ? traceparent : null,
          isError: isServerError,
          attributes: { 'rpc.system.name': 'socket.io', 'rpc.method': 'connect' }
        },
        next
      )
    }
  }
}
