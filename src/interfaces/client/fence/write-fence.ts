import type { ClientApp } from '../client-app.js'

/** What the fence needs of a real-time transport a view listens on: an event with an ack (the socket's `fence`). */
export interface FenceTransport {
  request(event: string, ...args: unknown[]): Promise<unknown>
  /** Calls `listener` whenever the transport connects again; returns the unsubscribe (socket.io). */
  reconnected?(listener: () => void): () => void
}

/** The query member a write asks for its event offset with (docs/wire-protocol.md, Read your writes). */
export const OFFSET_QUERY = '$offset'

/**
 * A write's views did not apply its event within the fence's wait (`readYourWrites({ timeout })`, default 5 s):
 * the write itself succeeded — its result is `result` — but the live queries and subscriptions of its service may
 * not show it yet.
 */
export class FenceTimeout extends Error {
  override readonly name = 'FenceTimeout'

  constructor(
    /** The write's event offset. */
    readonly offset: string,
    /** What the write answered. */
    readonly result: unknown,
    readonly timeout: number
  ) {
    super(`The write's event (offset ${offset}) did not reach this client's views within ${timeout}ms`)
  }
}

/**
 * Read your writes (README "Read your writes", ADR 0020): which services this client watches (live queries of
 * `service.watch`, listeners of record events on a real-time transport), and on which transports. A write to a
 * watched service asks the server for its event offset and resolves only once every transport its views listen on
 * answered `fence` for that offset: the server sends a connection its frames before that answer, so the views have
 * applied the write, on whichever instance their socket is. A write to a service nobody watches costs a map lookup.
 * Several clients may share one fence (a REST client writing, a socket client watching): `readYourWrites({ fence })`.
 */
export class WriteFence {
  /** Milliseconds a write waits for its views before it rejects with FenceTimeout. */
  timeout = 5_000
  enabled = true
  private readonly views = new Map<string, Map<FenceTransport, number>>()

  /** A view of `path` on `transport`; answers its removal. */
  add(path: string, transport: FenceTransport): () => void {
    let transports = this.views.get(path)
    if (!transports) this.views.set(path, (transports = new Map()))
    transports.set(transport, (transports.get(transport) ?? 0) + 1)
    let removed = false
    return () => {
      if (removed) return
      removed = true
      const left = (transports.get(transport) ?? 1) - 1
      if (left > 0) transports.set(transport, left)
      else transports.delete(transport)
      if (transports.size === 0 && this.views.get(path) === transports) this.views.delete(path)
    }
  }

  /** Whether a write to `path` waits for views. */
  watches(path: string): boolean {
    return this.enabled && this.views.has(path)
  }

  /**
   * Resolves once every transport with a view of `path` has delivered the event at `offset`; rejects with
   * FenceTimeout after `timeout`. A server without the fence (its error answer) is not waited for.
   */
  wait(path: string, offset: string, result: unknown): Promise<void> {
    const transports = [...(this.views.get(path)?.keys() ?? [])]
    if (transports.length === 0) return Promise.resolve()
    const timeout = this.timeout
    const stops: (() => void)[] = []
    let settled = false
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        settled = true
        reject(new FenceTimeout(offset, result, timeout))
      }, timeout)
      void Promise.all(transports.map((transport) => this.fenced(transport, offset, stops, () => settled))).then(() => {
        settled = true
        clearTimeout(timer)
        resolve()
      })
    }).finally(() => stops.forEach((stop) => stop()))
  }

  /**
   * Resolves once `transport` answered `fence` for `offset`. A connection dropped before the answer loses it (an ack
   * never comes on a new connection): the fence asks again on each reconnection, and after a request's timeout, until
   * the write's wait is over. A refusal (a server without the fence) is not waited for.
   */
  private fenced(transport: FenceTransport, offset: string, stops: (() => void)[], over: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const ask = () => {
        if (over()) return
        transport.request('fence', offset).then(
          () => resolve(),
          (error: unknown) => {
            if ((error as { name?: unknown } | undefined)?.name === 'Timeout') ask()
            else resolve()
          }
        )
      }
      const stop = transport.reconnected?.(ask)
      if (stop) stops.push(stop)
      ask()
    })
  }
}

export interface ReadYourWritesOptions {
  /** Milliseconds a write waits for its views before it rejects with FenceTimeout; default 5000. */
  timeout?: number
  /** false: writes resolve as soon as they are answered (no offset asked, no wait). Default true. */
  enabled?: boolean
  /** A fence shared with other clients (their views count for this client's writes); configure before watching. */
  fence?: WriteFence
}

/** `client.configure(readYourWrites({ timeout }))`: the fence's settings (it is on by default). */
export function readYourWrites(options: ReadYourWritesOptions = {}): (client: ClientApp) => void {
  return (client) => {
    const fence = options.fence ?? client.fence
    if (options.timeout !== undefined) fence.timeout = options.timeout
    if (options.enabled !== undefined) fence.enabled = options.enabled
    client.fence = fence
  }
}

/** The fence transport of a client's transport, when it has one (socket.io); undefined for REST. */
export function fenceTransportOf(client: ClientApp): FenceTransport | undefined {
  const transport = client.transport as Partial<FenceTransport> | undefined
  return typeof transport?.request === 'function' ? (transport as FenceTransport) : undefined
}
