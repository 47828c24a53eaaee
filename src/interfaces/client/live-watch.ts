import { BadRequest } from '../../domain/errors/errors.js'
import { applyChanges, type WindowChange } from '../../domain/query/live-window.js'
import type { Query } from '../../domain/service/service.js'
import type { ClientApp } from './client-app.js'
import { Emitter, type Listener } from './emitter.js'

/** One `live` frame of the server (docs/wire-protocol.md, Live queries). */
export interface LiveChange<T> {
  /** The event-log offset after which the list is as it is now (when the server records events). */
  offset?: string
  changes: WindowChange[]
  /** The list after the changes. */
  list: T[]
  /** Set when the server could not resume the watch: `list` is a fresh result, changes meanwhile were not sent. */
  reset?: true
}

interface WatchAnswer<T> {
  id: string
  offset?: string
  records?: T[]
  changes?: WindowChange[]
  reset?: true
}

/** The first wait before a failed watch is sent again while connected, and the longest (doubling in between). */
const RETRY_MS = 250
const MAX_RETRY_MS = 5000

/** What a live watch needs of a real-time transport: an event with an ack, and listening to server events. */
export interface LiveTransport {
  request(event: string, ...args: unknown[]): Promise<unknown>
  /** As `request`, giving `late` an answer that arrived after the request timed out (SocketioTransport has it). */
  requestWithLate?(late: (result: unknown) => void, event: string, ...args: unknown[]): Promise<unknown>
  listen(event: string, listener: (data: unknown) => void): () => void
}

/**
 * `service.watch({ query })`: the result of `find` for the query, kept up to date by the server's `live` frames.
 * `for await (const list of watch)` yields the current list (the first result, then the list after each change;
 * a slow loop gets the latest), `on('change', ({ changes, offset, list }) => …)` gives each frame, `list` the list
 * now. After a reconnect it watches again with `resume: { offset, records }`: the server sends each change missed
 * meanwhile as its own frame, or — past its event history's window — a fresh result with `reset: true` (also
 * emitted as 'reset'). A resume that fails while connected is emitted as 'error' and sent again (rewatch).
 */
export class LiveWatch<T = Record<string, unknown>> extends Emitter {
  list: T[] = []
  offset?: string
  private id?: string
  private stopped = false
  private version = 0
  private readonly waiting: (() => void)[] = []
  private readonly stops: (() => void)[] = []
  /** Frames that arrived before the answer named this watch's id. */
  private early: { id: string; offset?: string; changes: WindowChange[] }[] | undefined
  /** Counts `watch` requests: an answer to one sent before the last disconnect is ignored. */
  private attempt = 0
  private started = false
  /** Between a disconnect and the next connect. */
  private down = false
  private retry?: ReturnType<typeof setTimeout>
  private retryDelay = RETRY_MS
  private settle!: { resolve(list: T[]): void; reject(error: unknown): void }
  /** Settles with the first result. */
  readonly ready = new Promise<T[]>((resolve, reject) => (this.settle = { resolve, reject }))

  constructor(
    private readonly app: ClientApp,
    private readonly transport: LiveTransport,
    private readonly path: string,
    private readonly query: Query
  ) {
    super()
    this.stops.push(transport.listen('live', (frame) => this.frame(frame as LiveFrameData)))
    // A view of this service for read your writes: a write to it waits until this watch applied it.
    this.stops.push(app.fence.add(path, transport))
    const reconnect = () => {
      this.down = false
      this.rewatch()
    }
    // A request in flight when the socket dropped is never answered: the next connection watches again.
    const dropped = () => {
      this.down = true
      this.cancelRetry()
      this.id = undefined
      this.early = undefined
      this.attempt++
    }
    app.on('connect', reconnect)
    app.on('disconnect', dropped)
    this.stops.push(
      () => app.off('connect', reconnect),
      () => app.off('disconnect', dropped)
    )
    this.ready.catch(() => this.close())
    this.start().catch((error: unknown) => this.settle.reject(error))
  }

  /** 'change' and 'reset' give a LiveChange; 'error' a reconnection's failed watch. */
  override on(event: 'change' | 'reset', listener: (change: LiveChange<T>) => void): this
  override on(event: string, listener: Listener): this
  override on(event: string, listener: (change: never) => void): this {
    return super.on(event, listener as Listener)
  }

  /** Ends the watch on the server and here. */
  async unwatch(): Promise<void> {
    const id = this.id
    this.close()
    if (id !== undefined) await this.transport.request('unwatch', id).catch(() => undefined)
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T[], void, undefined> {
    await this.ready
    let seen = -1
    while (!this.stopped) {
      if (seen !== this.version) {
        seen = this.version
        yield this.list
        continue
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    }
  }

  /** Watches (again: with `resume` once it had a result); ignores an answer to a request from before a drop. */
  private async start(): Promise<void> {
    const attempt = ++this.attempt
    this.early = []
    const options = this.started ? { resume: { offset: this.offset ?? '', records: this.list } } : {}
    let answer: WatchAnswer<T>
    const args = ['watch', this.path, this.query, options] as const
    try {
      // A watch answered after its request timed out runs on the server, unknown here: it is unwatched at once.
      const { transport } = this
      answer = (await (transport.requestWithLate?.((late) => this.drop(late), ...args) ??
        transport.request(...args))) as WatchAnswer<T>
    } catch (error) {
      if (attempt !== this.attempt) return
      this.early = undefined
      throw error
    }
    if (attempt !== this.attempt || this.stopped) return this.drop(answer)
    this.id = answer.id
    if (answer.offset !== undefined) this.offset = answer.offset
    // A resume within the server's history: the missed changes follow as frames (the answer's are none).
    if (answer.changes) {
      if (answer.changes.length > 0) this.changed(answer.changes, answer.offset)
    } else {
      this.list = answer.records ?? []
      this.bump()
      if (answer.reset) this.emit('reset', { list: this.list, offset: this.offset, changes: [], reset: true })
    }
    const early = this.early ?? []
    this.early = undefined
    for (const frame of early) this.frame(frame)
    if (!this.started) this.settle.resolve(this.list)
    this.started = true
  }

  /** Ends on the server a watch this client does not hold (answered too late, or after a drop or an unwatch). */
  private drop(answer: unknown): void {
    const id = (answer as Partial<WatchAnswer<T>> | undefined)?.id
    if (id !== undefined) void this.transport.request('unwatch', id).catch(() => undefined)
  }

  /**
   * Watches again after a reconnect. A watch that fails while the socket stays up (a timeout: a lagging instance
   * waits for its log before it answers a resume) is tried again, backing off, until one is answered: no reconnect
   * may follow, and the list would stay as it was, stale, for good.
   */
  private rewatch(login = true): void {
    this.resume(login).then(
      () => (this.retryDelay = RETRY_MS),
      (error: unknown) => {
        this.emit('error', error)
        if (this.stopped || this.down || this.retry) return
        this.retry = setTimeout(() => {
          this.retry = undefined
          // The same connection, logged in already: the watch alone.
          if (!this.down) this.rewatch(false)
        }, this.retryDelay)
        ;(this.retry as { unref?: () => void }).unref?.()
        this.retryDelay = Math.min(this.retryDelay * 2, MAX_RETRY_MS)
      }
    )
  }

  private cancelRetry(): void {
    clearTimeout(this.retry)
    this.retry = undefined
  }

  /** After a reconnect: the login first (the authentication client sends it again), then the watch. */
  private async resume(login: boolean): Promise<void> {
    if (this.stopped || this.id !== undefined || this.early) return
    const auth = (this.app as { authentication?: { authenticated: boolean; reAuthenticate(): Promise<unknown> } })
      .authentication
    if (login && auth?.authenticated) await auth.reAuthenticate().catch(() => undefined)
    if (!this.stopped && this.id === undefined && !this.early) await this.start()
  }

  private frame(frame: LiveFrameData | { id?: undefined; offset?: unknown }): void {
    // A progress frame: every watch of the connection that is live is current at its offset (no change).
    if (frame.id === undefined) {
      if (!this.early && this.id !== undefined && typeof frame.offset === 'string') this.offset = frame.offset
      return
    }
    if (this.early) return void this.early.push(frame)
    if (frame.id !== this.id) return
    this.changed(frame.changes, frame.offset)
  }

  private changed(changes: WindowChange[], offset: string | undefined): void {
    if (offset !== undefined) this.offset = offset
    // A frame with no change is this watch's own progress: its offset moves, nothing else.
    if (changes.length === 0) return
    this.list = applyChanges(this.list as never[], changes) as T[]
    this.bump()
    this.emit('change', { changes, list: this.list, ...(offset === undefined ? {} : { offset }) })
  }

  private bump(): void {
    this.version++
    for (const resolve of this.waiting.splice(0)) resolve()
  }

  private close(): void {
    this.stopped = true
    this.id = undefined
    this.cancelRetry()
    for (const stop of this.stops.splice(0)) stop()
    for (const resolve of this.waiting.splice(0)) resolve()
  }
}

interface LiveFrameData {
  id: string
  offset?: string
  changes: WindowChange[]
}

/** The live transport of a client's transport; a 400 when it has none (REST). */
export function liveTransportOf(app: ClientApp): LiveTransport {
  const transport = app.transport as Partial<LiveTransport> | undefined
  if (!transport?.request || !transport.listen)
    throw new BadRequest('watch needs a real-time transport: configure the client with socketio(socket)')
  return transport as LiveTransport
}
