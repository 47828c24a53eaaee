import { FeathersError, Timeout } from '../../../domain/errors/errors.js'
import type { Params } from '../../../domain/service/service.js'
import type { ClientApp, ClientHook, ClientHookContext } from '../client-app.js'

export interface IdempotentWritesOptions {
  /** Attempts after the first while the server answers but fails (timeouts, 503, 409 in flight); default 5. */
  retries?: number
  /** Milliseconds before the first retry, doubled for each next one up to `maxDelay`; default 200 (max 5000). */
  delay?: number
  maxDelay?: number
  /** Milliseconds before an attempt counts as timed out and is sent again with its key; default none (REST). */
  timeout?: number
  /** Makes a write's key; default `crypto.randomUUID()`. */
  key?: () => string
  /** Services whose writes are left alone (a login must not wait behind writes); default authentication. */
  exclude?: readonly string[]
}

const WRITES = new Set(['create', 'update', 'patch', 'remove'])
/** The query member the server reads a socket call's key from (docs/wire-protocol.md, Idempotency keys). */
export const QUERY_KEY = '$idempotencyKey'

/** An attempt cut off by a dropped connection: sent again, with its key, once the connection is back. */
class Dropped extends Error {}

/**
 * `client.configure(idempotentWrites())`, after the transport: every create, update, patch and remove gets an
 * idempotency key (the `Idempotency-Key` header over REST, `$idempotencyKey` in the query over a socket) and is
 * sent again with the same key when its answer is lost — a timeout, a 503, a network error, a socket dropped while
 * it was in flight — so the server applies it once (README "Retries and idempotency"). Writes made while the
 * connection is down wait, and go out in the order they were made once it is back: while any waits, later writes
 * queue behind it. A key a caller set itself is kept.
 */
export function idempotentWrites(options: IdempotentWritesOptions = {}): (client: ClientApp) => void {
  return (client) => {
    const writes = new IdempotentWrites(client, options)
    client.hooks([writes.hook])
    client.on('connect', () => writes.connected())
    client.on('disconnect', () => writes.dropped())
  }
}

class IdempotentWrites {
  /** A write was cut off by the network: the next ones wait behind the writes in the queue. */
  private down = false
  /** The last write of the queue, settled or not, and how many wait in it. */
  private tail: Promise<unknown> = Promise.resolve()
  private waiting = 0
  private readonly connectWaiters = new Set<() => void>()
  private readonly dropWaiters = new Set<() => void>()

  constructor(
    private readonly client: ClientApp,
    private readonly options: IdempotentWritesOptions
  ) {}

  readonly hook: ClientHook = (context, next) => {
    if (!WRITES.has(context.method) || (this.options.exclude ?? ['authentication']).includes(context.path))
      return next()
    this.attachKey(context)
    if (this.waiting === 0 && this.isOnline()) return this.attempts(context, next)
    this.waiting++
    const sent = this.tail.then(() => this.attempts(context, next))
    this.tail = sent.then(
      () => this.waiting--,
      () => this.waiting--
    )
    return sent
  }

  connected(): void {
    for (const wake of [...this.connectWaiters]) wake()
  }

  dropped(): void {
    this.down = true
    for (const wake of [...this.dropWaiters]) wake()
  }

  private attachKey(context: ClientHookContext): void {
    const params: Params = (context.params = { ...context.params })
    const headers = (params.headers ?? {}) as Record<string, string>
    const query = params.query ?? {}
    if (headers['Idempotency-Key'] !== undefined || query[QUERY_KEY] !== undefined) return
    const key = (this.options.key ?? (() => globalThis.crypto.randomUUID()))()
    if (this.client.transport?.name === 'rest') params.headers = { ...headers, 'Idempotency-Key': `"${key}"` }
    else params.query = { ...query, [QUERY_KEY]: key }
  }

  /** Sends the write until it is answered, or fails for a reason a retry cannot change. */
  private async attempts(context: ClientHookContext, next: () => Promise<void>): Promise<void> {
    const retries = this.options.retries ?? 5
    for (let failed = 0; ;) {
      await this.whenConnected()
      try {
        await this.attempt(next)
        this.down = false
        return
      } catch (error) {
        if (error instanceof Dropped) continue
        if (!retriable(error) || failed >= retries) throw error
        if (isNetwork(error)) this.down = true
        await sleep(Math.min((this.options.delay ?? 200) * 2 ** failed++, this.options.maxDelay ?? 5000))
      }
    }
  }

  /** One attempt, cut short by a dropped socket or the timeout; a late answer of an abandoned one is ignored. */
  private attempt(next: () => Promise<void>): Promise<void> {
    const sent = next()
    const timeout = this.options.timeout
    return new Promise<void>((resolve, reject) => {
      const drop = () => settle(() => reject(new Dropped()))
      const timer =
        timeout === undefined
          ? undefined
          : setTimeout(() => settle(() => reject(new Timeout(`No answer within ${timeout}ms`))), timeout)
      const settle = (end: () => void) => {
        this.dropWaiters.delete(drop)
        clearTimeout(timer)
        end()
      }
      this.dropWaiters.add(drop)
      sent.then(
        () => settle(resolve),
        (error: unknown) => settle(() => reject(error))
      )
    })
  }

  private isOnline(): boolean {
    return !this.down && this.socketConnected() !== false
  }

  /** The socket's state when the transport is a socket; undefined for REST. */
  private socketConnected(): boolean | undefined {
    return (this.client.transport as { socket?: { connected?: boolean } } | undefined)?.socket?.connected
  }

  private whenConnected(): Promise<void> {
    if (this.socketConnected() !== false) return Promise.resolve()
    return new Promise((resolve) => {
      const wake = () => {
        this.connectWaiters.delete(wake)
        resolve()
      }
      this.connectWaiters.add(wake)
    })
  }
}

/** Worth sending again with the same key: no answer (timeout, network), the server away, or the key in flight. */
function retriable(error: unknown): boolean {
  if (!(error instanceof FeathersError)) return false
  return error.code === 408 || error.code === 503 || error.code === 502 || error.code === 504 || isInFlight(error)
}

function isNetwork(error: unknown): boolean {
  return error instanceof FeathersError && (error.code === 503 || error.code === 408)
}

function isInFlight(error: FeathersError): boolean {
  return error.code === 409 && /Idempotency-Key is still being processed/.test(error.message)
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
