import type { IncomingHttpHeaders } from 'node:http'
import type { Gateway } from '../../application/transport/index.js'
import type { RealtimeExtension } from '../realtime/realtime-transport.js'

/** The older events, which are calls of the authentication service. */
const AUTHENTICATION_EVENTS: Record<string, string> = { authenticate: 'create', logout: 'remove' }

/** Runs one socket call (`event`, with `path` its first argument) inside the extensions around calls. */
export type AroundCall = (event: unknown, path: unknown, call: () => Promise<unknown>) => Promise<unknown>
/** Runs one handshake inside the extensions around handshakes. */
export type AroundHandshake = (headers: IncomingHttpHeaders, handshake: () => Promise<void>) => Promise<void>

/**
 * The extensions around socket calls as one function; without any, the call just runs. The extensions see the
 * service and method the call names when the app has them (the older `authenticate` and `logout` events are the
 * authentication service's `create` and `remove`), undefined for anything else.
 */
export function aroundCalls(gateway: Gateway, extensions: readonly RealtimeExtension[]): AroundCall {
  const arounds = extensions.flatMap((e) => (e.aroundCall ? [e.aroundCall.bind(e)] : []))
  if (arounds.length === 0) return (_event, _path, call) => call()
  return (event, path, call) => {
    const target =
      typeof event === 'string' && Object.hasOwn(AUTHENTICATION_EVENTS, event)
        ? { path: 'authentication', method: AUTHENTICATION_EVENTS[event]! }
        : resolved(gateway, event, path)
    return arounds.reduceRight<() => Promise<unknown>>((next, around) => () => around(target, next), call)()
  }
}

/** The extensions around handshakes as one function; without any, the handshake just runs. */
export function aroundHandshakes(extensions: readonly RealtimeExtension[]): AroundHandshake {
  const arounds = extensions.flatMap((e) => (e.aroundHandshake ? [e.aroundHandshake.bind(e)] : []))
  if (arounds.length === 0) return (_headers, handshake) => handshake()
  return (headers, handshake) =>
    arounds.reduceRight<() => Promise<void>>((next, around) => () => around(headers, next), handshake)()
}

function resolved(gateway: Gateway, event: unknown, path: unknown): { path: string; method: string } | undefined {
  const target = typeof path === 'string' ? gateway.resolve(path) : undefined
  return target && typeof event === 'string' && target.methods.includes(event)
    ? { path: target.path, method: event }
    : undefined
}
