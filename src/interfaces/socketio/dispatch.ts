import type { Socket } from 'socket.io'
import type { Gateway } from '../../application/transport/index.js'
import { convertError } from '../../domain/errors/convert-error.js'
import { BadRequest, FeathersError, MethodNotAllowed, NotFound, TooManyRequests } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'
import { fromArguments } from '../../domain/service/method-layout.js'
import type { Connection, Query } from '../../domain/service/service.js'
import { releaseReceivedChunk } from './received-chunk.js'
import type { SocketEventHandler } from '../realtime/realtime-transport.js'
import type { AroundCall } from './call-extensions.js'

type Ack = (...args: unknown[]) => void
type Asked = { offset?: () => Promise<string | undefined> }

export interface DispatchSettings {
  gateway: Gateway
  logger: Logger
  /** Calls one connection may have in flight; more are answered with 429 TooManyRequests. */
  maxConcurrentCalls: number
  /** The extensions around calls (tracing's server spans), as one function (call-extensions.ts). */
  around: AroundCall
  /** Socket events modules serve besides calls (RealtimeExtension.socketEvents); whether a socket reads still. */
  socketEvents?: Readonly<Record<string, SocketEventHandler>>
  admits?: (socket: Socket) => boolean
}

/**
 * Serves sockets' events as calls: `emit(method, path, ...args, ack)` through the gateway, and the
 * older `authenticate` and `logout` events; the ack gets `(null, result)` or `(errorEnvelope)`
 * (docs/wire-protocol.md, Method calls). Calls sent as soon as a recovered socket opened run once
 * it is `restored`. One listener serves every socket (socket.io calls `onAny` listeners with the
 * socket as `this`), and a socket has state here only while it has calls in flight or is being
 * restored: no closure per socket.
 */
export class SocketCalls {
  private readonly inFlight = new WeakMap<Socket, number>()
  private readonly restoring = new WeakMap<Socket, Promise<void>>()
  private readonly received = ((calls: SocketCalls) =>
    function (this: Socket, event: unknown, ...args: unknown[]): void {
      calls.receive(this, event, args)
    })(this)

  constructor(
    private readonly settings: DispatchSettings,
    /** The app's connection of a socket (SocketConnections). */
    private readonly connectionOf: (socket: Socket) => Connection | undefined
  ) {}

  serve(socket: Socket, restored?: Promise<void>): void {
    if (restored) {
      this.restoring.set(socket, restored)
      void restored.finally(() => this.restoring.delete(socket))
    }
    socket.onAny(this.received)
    // socket.io pushes the listener onto a new array, which V8 sizes for 17 (152 bytes per socket): keep an exact copy.
    const any = socket as unknown as { _anyListeners?: unknown[] }
    if (any._anyListeners) any._anyListeners = any._anyListeners.slice()
  }

  private receive(socket: Socket, event: unknown, args: unknown[]): void {
    releaseReceivedChunk(socket)
    const { gateway, logger, maxConcurrentCalls, around } = this.settings
    const ack = typeof args[args.length - 1] === 'function' ? (args.pop() as Ack) : undefined
    const connection = this.connectionOf(socket)
    if (connection === undefined) return
    // Own names only: a frame named `toString` or `constructor` is a call like any other, not Object's method.
    const events = this.settings.socketEvents
    const served = typeof event === 'string' && events && Object.hasOwn(events, event) ? events[event] : undefined
    if (served) return this.serveEvent(socket, connection, served, args, ack)
    const inFlight = this.inFlight.get(socket) ?? 0
    if (inFlight >= maxConcurrentCalls) {
      const error = new TooManyRequests(
        `Too many concurrent calls on this connection (limit ${maxConcurrentCalls}); wait for answers before sending more`
      )
      return answer(ack, logger, error.toJSON())
    }
    this.inFlight.set(socket, inFlight + 1)
    const asked: Asked = {} // read your writes: a write's event offset, sent as a third ack argument
    const run = () =>
      event === 'authenticate'
        ? gateway.authenticate(connection, args[0])
        : event === 'logout'
          ? gateway.logout(connection)
          : dispatchCall(gateway, connection, event, args[0], args.slice(1), asked)
    // Unexpected errors are logged inside the call's span, so the line carries its trace id.
    const traced = () =>
      around(event, args[0], () =>
        run().catch((thrown: unknown) => {
          if (!(thrown instanceof FeathersError))
            logger.error('socket call failed', { event: String(event), error: thrown })
          throw thrown
        })
      )
    const restored = this.restoring.get(socket)
    const call = restored ? restored.then(traced) : traced()
    call
      .then(
        (result) =>
          asked.offset
            ? void asked.offset().then((at) => answer(ack, logger, null, result ?? null, ...(at ? [at] : [])))
            : answer(ack, logger, null, result === undefined ? null : result),
        (thrown: unknown) => answer(ack, logger, convertError(thrown).toJSON())
      )
      .finally(() => {
        const left = this.inFlight.get(socket)! - 1
        if (left === 0) this.inFlight.delete(socket)
        else this.inFlight.set(socket, left)
      })
  }

  /** A module's socket event (RealtimeExtension.socketEvents): it answers once; a rejection is its error. */
  private serveEvent(socket: Socket, connection: Connection, served: SocketEventHandler, args: unknown[], ack?: Ack) {
    const { gateway, logger, admits } = this.settings
    const respond = (...reply: unknown[]) => answer(ack, logger, ...reply) // socket.io sends one ack at most
    const send = (event: string, data: unknown) => void ((admits?.(socket) ?? true) && socket.emit(event, data))
    const run = () => served({ connection, args, gateway, answer: respond, send })
    // After a restore in progress, else at once (a microtask): a handler that throws or returns no promise is caught.
    void Promise.resolve(this.restoring.get(socket))
      .then(run)
      .catch((thrown: unknown) => {
        if (!(thrown instanceof FeathersError)) logger.error('socket event failed', { error: thrown })
        respond(convertError(thrown).toJSON())
      })
  }
}

/**
 * Runs `emit(method, path, ...args)` through the gateway and resolves with what the caller
 * receives. The arguments after the path are laid out as the method's own, with the query in place
 * of params. Every malformed frame becomes a framework error here, never an exception elsewhere.
 */
async function dispatchCall(
  gateway: Gateway,
  connection: Connection,
  method: unknown,
  path: unknown,
  args: unknown[],
  asked: Asked
): Promise<unknown> {
  if (typeof path !== 'string') throw new NotFound('Invalid service path')
  const target = gateway.resolve(path)
  if (!target) throw new NotFound(`Service '${path}' not found`)
  if (typeof method !== 'string' || !target.methods.includes(method)) {
    throw new MethodNotAllowed(`Method '${String(method)}' not allowed on service '${path}'`)
  }
  const { id, data, last, extra } = fromArguments<unknown>(method, args)
  const query = last ?? {}
  if (extra > 0) throw new BadRequest(`Too many arguments for '${method}' method`)
  if (typeof query !== 'object' || query === null || Array.isArray(query)) {
    throw new BadRequest(
      `The query of '${method}' must be an object (got ${Array.isArray(query) ? 'an array' : typeof query})`
    )
  }
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    throw new BadRequest(
      `The id of '${method}' must be a string or a number (got ${Array.isArray(id) ? 'an array' : typeof id})`
    )
  }
  const params = gateway.connectionParams(connection, { ...(query as Query) }, target.route)
  const { result, offset } = await gateway.call({ path: target.path, method, id, data, params })
  asked.offset = offset
  return result
}

function answer(ack: Ack | undefined, logger: Logger, ...args: unknown[]): void {
  if (!ack) return
  try {
    ack(...args)
  } catch (error) {
    // A result socket.io cannot encode (e.g. circular) must not take the process down.
    logger.error('could not send a socket answer', { error })
    ack(convertError(error).toJSON())
  }
}
